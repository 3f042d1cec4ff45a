-- The sealed values go with the column: the names stay, with blank values (set them again).
ALTER TABLE webhook_destinations DROP COLUMN headers_encrypted;
