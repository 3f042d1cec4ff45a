-- Nothing to undo: refiguring only recomputes stored figures with the hours in force.
SELECT 1;
