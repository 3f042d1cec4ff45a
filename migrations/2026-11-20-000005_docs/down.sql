DROP FUNCTION docs_full_text(text, integer);
DROP TABLE docs_lexemes;
DROP TABLE docs_index_state;
DROP TABLE docs_chunks;
DROP TABLE docs_documents;
