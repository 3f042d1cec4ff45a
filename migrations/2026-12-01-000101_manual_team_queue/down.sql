-- Manual teams' queues are left as they are: a queue a manual team does not serve changes nothing.
SELECT 1;
