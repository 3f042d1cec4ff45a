-- What was cut from the stored URLs is gone on purpose; reverting keeps them as they are.
SELECT 1;
