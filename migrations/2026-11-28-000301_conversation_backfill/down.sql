DROP TABLE conversation_backfill;
