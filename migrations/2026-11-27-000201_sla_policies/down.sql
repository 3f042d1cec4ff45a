DROP TABLE thread_slas;
DROP TABLE sla_policies;
