-- The report page's first response time distribution reads every first response of its period
-- (kinds 4 and 5 of conversation_facts: a member's and an AI agent's), which the period index
-- could only find among all the period's facts: 0.37–0.58 s at 1M messages over 90 days. Only
-- first responses enter this index (one per conversation cycle), so a send pays nothing for it and
-- the page's statement reads its ~66,000 rows from the index alone (6–8 ms).
CREATE INDEX conversation_facts_first_responses ON conversation_facts (workspace_id, at)
    INCLUDE (kind, seconds, business_seconds)
    WHERE kind IN (4, 5);
