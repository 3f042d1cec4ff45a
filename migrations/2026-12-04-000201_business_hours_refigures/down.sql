DROP TABLE business_hours_refigures;
