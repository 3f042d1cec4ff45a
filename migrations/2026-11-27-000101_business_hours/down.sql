DROP TABLE business_hours;
