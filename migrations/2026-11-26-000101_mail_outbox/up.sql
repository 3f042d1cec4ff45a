-- The e-mail outbox (docs/product/email.md): every mail wms sends is written here in the same
-- transaction as the change that causes it, and sent by the mail workers of any instance.
-- Not owned by a workspace: a password reset belongs to an account, not to a workspace.
CREATE TABLE mail_outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    recipient       text        NOT NULL CHECK (position('@' IN recipient) > 1),
    subject         text        NOT NULL,
    -- Emptied once the mail is sent or has failed: the bodies hold one-time links, which must not
    -- outlive their delivery in the database.
    body_text       text        NOT NULL,
    body_html       text        NOT NULL,
    status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
    -- Attempts begun (a claim counts one); the claim that records a result must hold the latest.
    attempts        integer     NOT NULL DEFAULT 0,
    -- When a pending mail is due; while sending, when the claim's lease ends.
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    sent_at         timestamptz
);
-- The workers' claims and the queue's metrics read only the mails still to send.
CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE status IN ('pending', 'sending');
-- Finished mails are pruned by age.
CREATE INDEX mail_outbox_created_idx ON mail_outbox (created_at) WHERE status IN ('sent', 'failed');
