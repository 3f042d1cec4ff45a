DROP TABLE docs_search_visitors;
