DROP TABLE conversation_facts;
DROP TABLE conversation_cycles;
