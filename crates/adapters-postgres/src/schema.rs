// @generated automatically by Diesel CLI.

pub mod sql_types {
    #[derive(diesel::sql_types::SqlType)]
    #[diesel(postgres_type(name = "tsvector", schema = "pg_catalog"))]
    pub struct Tsvector;
}

diesel::table! {
    ai_agents (id) {
        id -> Int8,
        workspace_id -> Int8,
        name -> Text,
        status -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    api_key_expiry_notices (api_key_id, notice) {
        workspace_id -> Int8,
        api_key_id -> Int8,
        notice -> Text,
        mailed -> Bool,
        handled_at -> Timestamptz,
    }
}

diesel::table! {
    api_keys (id) {
        id -> Int8,
        workspace_id -> Int8,
        name -> Text,
        key_digest -> Bytea,
        masked_key -> Text,
        created_by_user_id -> Nullable<Int8>,
        created_at -> Timestamptz,
        expires_at -> Nullable<Timestamptz>,
        last_used_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
        scopes -> Nullable<Array<Text>>,
        rolled_to_id -> Nullable<Int8>,
        last_used_ip -> Nullable<Text>,
    }
}

diesel::table! {
    channels (id) {
        id -> Int8,
        workspace_id -> Int8,
        channel_type -> Text,
        display_name -> Text,
        identifier -> Text,
        status -> Text,
        credentials_encrypted -> Nullable<Bytea>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        platform_account_id -> Nullable<Text>,
        verify_token_digest -> Nullable<Bytea>,
        send_paused_until -> Nullable<Timestamptz>,
        // The conversation lifecycle (migration 2026-11-26-000701_lifecycle).
        default_team_id -> Nullable<Int8>,
        waba_id -> Nullable<Text>,
        templates_synced_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    contacts (id) {
        id -> Int8,
        workspace_id -> Int8,
        name -> Nullable<Text>,
        phone -> Nullable<Text>,
        email -> Nullable<Text>,
        platform_user_id -> Nullable<Text>,
        country -> Nullable<Text>,
        language -> Nullable<Text>,
        note -> Nullable<Text>,
        first_contacted_at -> Nullable<Timestamptz>,
        last_contacted_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        erased_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    use diesel::sql_types::*;
    use super::sql_types::Tsvector;

    docs_chunks (id) {
        id -> Int8,
        document_id -> Int8,
        ordinal -> Int4,
        heading -> Text,
        body -> Text,
        search -> Tsvector,
        embedding -> Nullable<Array<Nullable<Float4>>>,
        embedding_model -> Nullable<Text>,
        embedding_dim -> Nullable<Int4>,
    }
}

diesel::table! {
    docs_documents (id) {
        id -> Int8,
        slug -> Text,
        title -> Text,
        category -> Text,
        source_path -> Text,
        content_hash -> Text,
        status -> Text,
        failure_reason -> Nullable<Text>,
        embedding_model -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    docs_index_state (id) {
        id -> Bool,
        generation -> Int8,
        chunks -> Int4,
        changed_at -> Timestamptz,
    }
}

diesel::table! {
    docs_lexemes (lexeme) {
        lexeme -> Text,
        chunks -> Int4,
    }
}

diesel::table! {
    idempotency_keys (workspace_id, key) {
        workspace_id -> Int8,
        key -> Text,
        fingerprint -> Bytea,
        message_id -> Nullable<Int8>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    labels (id) {
        id -> Int8,
        workspace_id -> Int8,
        name -> Text,
        color -> Text,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    login_throttle (subject) {
        subject -> Text,
        last_failed_at -> Timestamptz,
        failed_at -> Array<Timestamptz>,
    }
}

diesel::table! {
    message_daily_stats (workspace_id, channel_id, day, slot) {
        workspace_id -> Int8,
        channel_id -> Int8,
        day -> Date,
        slot -> Int2,
        sent -> Int4,
        delivered -> Int4,
        read -> Int4,
        failed -> Int4,
    }
}

diesel::table! {
    messages (id) {
        id -> Int8,
        workspace_id -> Int8,
        thread_id -> Int8,
        channel_id -> Int8,
        direction -> Text,
        sender_kind -> Text,
        author_user_id -> Nullable<Int8>,
        author_ai_agent_id -> Nullable<Int8>,
        content -> Text,
        status -> Text,
        queued_at -> Nullable<Timestamptz>,
        sent_at -> Nullable<Timestamptz>,
        delivered_at -> Nullable<Timestamptz>,
        read_at -> Nullable<Timestamptz>,
        failed_at -> Nullable<Timestamptz>,
        failure_reason -> Nullable<Text>,
        platform_message_id -> Nullable<Text>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        template -> Nullable<Jsonb>,
        dispatch_attempts -> Int4,
        next_dispatch_at -> Nullable<Timestamptz>,
        // The conversation lifecycle (migration 2026-11-26-000701_lifecycle).
        sender_type -> Text,
        sender_id -> Nullable<Int8>,
        platform_tag -> Nullable<Text>,
    }
}

diesel::table! {
    rate_limit_windows (id) {
        id -> Int8,
        api_key_id -> Nullable<Int8>,
        user_token_id -> Nullable<Int8>,
        workspace_id -> Nullable<Int8>,
        user_id -> Nullable<Int8>,
    }
}

diesel::table! {
    service_keys (name) {
        name -> Text,
        key -> Bytea,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    sessions (id) {
        id -> Int8,
        token_digest -> Bytea,
        user_id -> Int8,
        workspace_id -> Nullable<Int8>,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    team_members (team_id, user_id) {
        workspace_id -> Int8,
        team_id -> Int8,
        user_id -> Int8,
        // The conversation lifecycle (migration 2026-11-26-000701_lifecycle).
        last_assigned_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    teams (id) {
        id -> Int8,
        workspace_id -> Int8,
        name -> Text,
        created_at -> Timestamptz,
        // The conversation lifecycle (migration 2026-11-26-000701_lifecycle).
        assignment_mode -> Text,
        assignment_capacity -> Nullable<Int4>,
    }
}

diesel::table! {
    thread_labels (thread_id, label_id) {
        workspace_id -> Int8,
        thread_id -> Int8,
        label_id -> Int8,
    }
}

diesel::table! {
    thread_status_stats (workspace_id, status, slot) {
        workspace_id -> Int8,
        status -> Text,
        slot -> Int2,
        threads -> Int8,
        unread_messages -> Int8,
    }
}

diesel::table! {
    threads (id) {
        id -> Int8,
        workspace_id -> Int8,
        contact_id -> Int8,
        channel_id -> Int8,
        status -> Text,
        unread_count -> Int4,
        assignee_type -> Nullable<Text>,
        assignee_user_id -> Nullable<Int8>,
        assignee_team_id -> Nullable<Int8>,
        assignee_ai_agent_id -> Nullable<Int8>,
        handover_status -> Nullable<Text>,
        last_message_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        // The conversation lifecycle (migration 2026-11-26-000701_lifecycle).
        snoozed_until -> Nullable<Timestamptz>,
        status_reason -> Nullable<Text>,
        team_id -> Nullable<Int8>,
        assigned_at -> Nullable<Timestamptz>,
        assignment_reason -> Nullable<Text>,
        waiting_since -> Nullable<Timestamptz>,
        latest_inbound_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    user_tokens (id) {
        id -> Int8,
        workspace_id -> Int8,
        user_id -> Int8,
        token_digest -> Bytea,
        created_at -> Timestamptz,
        expires_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    users (id) {
        id -> Int8,
        email -> Text,
        name -> Text,
        password_hash -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    webhook_attempts (id) {
        id -> Int8,
        workspace_id -> Int8,
        delivery_id -> Int8,
        attempt_number -> Int4,
        trigger -> Text,
        attempted_at -> Timestamptz,
        status_code -> Nullable<Int4>,
        error -> Nullable<Text>,
        duration_ms -> Int4,
        response_excerpt -> Text,
        next_attempt_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    webhook_deliveries (id) {
        id -> Int8,
        workspace_id -> Int8,
        destination_id -> Int8,
        event_id -> Int8,
        status -> Text,
        attempt_count -> Int4,
        next_attempt_at -> Nullable<Timestamptz>,
        last_attempt_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        ordering_key -> Nullable<Int8>,
    }
}

diesel::table! {
    webhook_destinations (id) {
        id -> Int8,
        workspace_id -> Int8,
        url -> Text,
        platform -> Text,
        events -> Array<Nullable<Text>>,
        active -> Bool,
        secret_encrypted -> Bytea,
        previous_secret_encrypted -> Nullable<Bytea>,
        previous_secret_expires_at -> Nullable<Timestamptz>,
        disabled_reason -> Nullable<Text>,
        disabled_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        failing_since -> Nullable<Timestamptz>,
        rate_limit_per_second -> Nullable<Int4>,
        max_in_flight -> Nullable<Int4>,
        headers -> Jsonb,
        filter -> Nullable<Jsonb>,
        ordering -> Text,
        failed_in_a_row -> Int4,
        failing -> Bool,
        headers_encrypted -> Nullable<Bytea>,
    }
}

diesel::table! {
    webhook_events (id) {
        id -> Int8,
        workspace_id -> Int8,
        event_type -> Text,
        message_id -> Text,
        payload -> Text,
        created_at -> Timestamptz,
        txid -> Int8,
        sample -> Bool,
        // The event's contact and thread, so erasing a contact finds its events by index.
        contact_id -> Nullable<Int8>,
        thread_id -> Nullable<Int8>,
    }
}

diesel::table! {
    webhook_throttles (destination_id) {
        destination_id -> Int8,
        tokens -> Float8,
        refilled_at -> Timestamptz,
        concurrency -> Nullable<Float8>,
        rate -> Nullable<Float8>,
        threshold -> Nullable<Float8>,
        decreased_at -> Nullable<Timestamptz>,
        hold_until -> Nullable<Timestamptz>,
        recent_at -> Array<Timestamptz>,
        recent_sent -> Array<Int4>,
    }
}

diesel::table! {
    workspace_members (workspace_id, user_id) {
        workspace_id -> Int8,
        user_id -> Int8,
        role -> Text,
        is_active -> Bool,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
        name -> Nullable<Text>,
        // The conversation lifecycle (migration 2026-11-26-000701_lifecycle).
        availability -> Text,
        status -> Text,
        joined_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    workspaces (id) {
        id -> Int8,
        name -> Text,
        slug -> Text,
        is_active -> Bool,
        plan -> Text,
        time_zone -> Text,
        created_at -> Timestamptz,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    audit_events (id) {
        id -> Int8,
        workspace_id -> Int8,
        occurred_at -> Timestamptz,
        action -> Text,
        actor_type -> Text,
        actor_id -> Nullable<Int8>,
        actor_label -> Nullable<Text>,
        target_type -> Nullable<Text>,
        target_id -> Nullable<Int8>,
        ip -> Nullable<Text>,
        user_agent -> Nullable<Text>,
        request_id -> Nullable<Text>,
        details -> Jsonb,
    }
}

diesel::table! {
    member_invitations (id) {
        id -> Int8,
        workspace_id -> Int8,
        user_id -> Int8,
        token_digest -> Bytea,
        expires_at -> Timestamptz,
        used_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::joinable!(ai_agents -> workspaces (workspace_id));
diesel::joinable!(api_keys -> users (created_by_user_id));
diesel::joinable!(api_keys -> workspaces (workspace_id));
diesel::joinable!(channels -> workspaces (workspace_id));
diesel::joinable!(contacts -> workspaces (workspace_id));
diesel::joinable!(docs_chunks -> docs_documents (document_id));
diesel::joinable!(idempotency_keys -> workspaces (workspace_id));
diesel::joinable!(labels -> workspaces (workspace_id));
diesel::joinable!(messages -> ai_agents (author_ai_agent_id));
diesel::joinable!(messages -> users (author_user_id));
diesel::joinable!(rate_limit_windows -> api_keys (api_key_id));
diesel::joinable!(rate_limit_windows -> user_tokens (user_token_id));
diesel::joinable!(sessions -> users (user_id));
diesel::joinable!(sessions -> workspaces (workspace_id));
diesel::joinable!(teams -> workspaces (workspace_id));
diesel::joinable!(thread_status_stats -> workspaces (workspace_id));
diesel::joinable!(threads -> workspaces (workspace_id));
diesel::joinable!(webhook_destinations -> workspaces (workspace_id));
diesel::joinable!(webhook_events -> workspaces (workspace_id));
diesel::joinable!(webhook_throttles -> webhook_destinations (destination_id));
diesel::joinable!(workspace_members -> users (user_id));
diesel::joinable!(workspace_members -> workspaces (workspace_id));
diesel::joinable!(audit_events -> workspaces (workspace_id));

// Anonymous docs searches' pace per client address (the public search cannot be flooded).
diesel::table! {
    docs_search_visitors (client) {
        client -> Text,
        searches -> Array<Timestamptz>,
        expires_at -> Timestamptz,
    }
}

// The top-countries rollup (per channel, day and contact).
diesel::table! {
    contact_day_stats (workspace_id, channel_id, day, contact_id) {
        workspace_id -> Int8,
        channel_id -> Int8,
        day -> Date,
        contact_id -> Int8,
        messages -> Int4,
        inbound -> Int4,
        sent -> Int4,
        delivered -> Int4,
        read -> Int4,
        failed -> Int4,
    }
}

// The top-countries summary (migration 2026-11-27-000601_country_day_stats), kept by triggers.
diesel::table! {
    contact_activity (contact_id, scope_id) {
        contact_id -> Int8,
        scope_id -> Int8,
        workspace_id -> Int8,
        country -> Text,
        last_day -> Nullable<Date>,
    }
}

diesel::table! {
    country_day_stats (workspace_id, scope_id, day, country, slot) {
        workspace_id -> Int8,
        scope_id -> Int8,
        day -> Date,
        country -> Text,
        slot -> Int2,
        contacts -> Int4,
        inbound -> Int4,
        sent -> Int4,
        delivered -> Int4,
        read -> Int4,
        failed -> Int4,
    }
}

// Service window and WhatsApp templates (migrations 2026-11-26-0008nn).
diesel::table! {
    whatsapp_templates (workspace_id, channel_id, name, language) {
        workspace_id -> Int8,
        channel_id -> Int8,
        name -> Text,
        language -> Text,
        category -> Text,
        status -> Text,
        quality -> Nullable<Text>,
        parameters -> Int4,
        body -> Text,
        rejected_reason -> Nullable<Text>,
        updated_at -> Timestamptz,
    }
}

diesel::joinable!(whatsapp_templates -> channels (channel_id));

diesel::allow_tables_to_appear_in_same_query!(
    api_key_expiry_notices,
    audit_events,
    member_invitations,
    ai_agents,
    api_keys,
    channels,
    contacts,
    docs_chunks,
    docs_documents,
    docs_index_state,
    docs_lexemes,
    idempotency_keys,
    labels,
    login_throttle,
    message_daily_stats,
    messages,
    rate_limit_windows,
    service_keys,
    sessions,
    team_members,
    teams,
    thread_labels,
    thread_status_stats,
    threads,
    user_tokens,
    users,
    webhook_attempts,
    webhook_deliveries,
    webhook_destinations,
    webhook_events,
    webhook_throttles,
    workspace_members,
    workspaces,
    whatsapp_templates,
);

// OAuth for MCP clients (migration 2026-11-26-000501_oauth), declared by hand.
diesel::table! {
    oauth_clients (id) {
        id -> Int8,
        client_id -> Text,
        client_name -> Text,
        redirect_uris -> Array<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    oauth_grants (id) {
        id -> Int8,
        workspace_id -> Int8,
        user_id -> Int8,
        client_id -> Int8,
        scope -> Text,
        resource -> Text,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
        revoked_at -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    oauth_codes (id) {
        id -> Int8,
        workspace_id -> Int8,
        grant_id -> Int8,
        code_digest -> Bytea,
        redirect_uri -> Text,
        code_challenge -> Text,
        expires_at -> Timestamptz,
        used_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    oauth_tokens (id) {
        id -> Int8,
        workspace_id -> Int8,
        grant_id -> Int8,
        kind -> Text,
        token_digest -> Bytea,
        expires_at -> Timestamptz,
        used_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}

// The e-mail outbox (migration 2026-11-26-000101_mail_outbox).
diesel::table! {
    mail_outbox (id) {
        id -> Int8,
        recipient -> Text,
        subject -> Text,
        body_text -> Text,
        body_html -> Text,
        status -> Text,
        attempts -> Int4,
        next_attempt_at -> Timestamptz,
        last_error -> Nullable<Text>,
        created_at -> Timestamptz,
        sent_at -> Nullable<Timestamptz>,
    }
}

// Memberships' status and password resets (migration 2026-11-26-000102_member_status); the
// `is_active` of `workspace_members` is computed from `status` and never written.
diesel::table! {
    password_resets (id) {
        id -> Int8,
        user_id -> Int8,
        token_digest -> Bytea,
        expires_at -> Timestamptz,
        used_at -> Nullable<Timestamptz>,
        created_at -> Timestamptz,
    }
}
diesel::joinable!(password_resets -> users (user_id));
diesel::allow_tables_to_appear_in_same_query!(password_resets, users);

// Business hours (migration 2026-11-27-000101_business_hours).
diesel::table! {
    business_hours (workspace_id) {
        workspace_id -> Int8,
        record -> Jsonb,
        updated_at -> Timestamptz,
    }
}

diesel::table! {
    business_hours_refigures (workspace_id) {
        workspace_id -> Int8,
        up_to -> Int8,
        after -> Int8,
        changed_at -> Timestamptz,
    }
}

diesel::table! {
    sla_policies (id) {
        id -> Int8,
        workspace_id -> Int8,
        name -> Text,
        first_response_seconds -> Nullable<Int8>,
        next_response_seconds -> Nullable<Int8>,
        resolution_seconds -> Nullable<Int8>,
        business_hours -> Bool,
        channel_ids -> Array<Int8>,
        labels -> Array<Text>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    thread_slas (workspace_id, thread_id) {
        workspace_id -> Int8,
        thread_id -> Int8,
        policy_id -> Nullable<Int8>,
        first_response_seconds -> Nullable<Int8>,
        next_response_seconds -> Nullable<Int8>,
        resolution_seconds -> Nullable<Int8>,
        business_hours -> Bool,
        cycle_started_at -> Timestamptz,
        first_response_due_at -> Nullable<Timestamptz>,
        next_response_due_at -> Nullable<Timestamptz>,
        resolution_due_at -> Nullable<Timestamptz>,
        responded -> Bool,
        resolved -> Bool,
        stopped_since -> Nullable<Timestamptz>,
        breaches -> Array<Text>,
        check_at -> Nullable<Timestamptz>,
        updated_at -> Timestamptz,
    }
}

// The conversation reports' storage (migration 2026-11-27-000102_conversation_facts).
diesel::table! {
    conversation_cycles (thread_id) {
        thread_id -> Int8,
        workspace_id -> Int8,
        started_at -> Timestamptz,
        first_response_at -> Nullable<Timestamptz>,
        first_response_ai_at -> Nullable<Timestamptz>,
        awaiting_since -> Nullable<Timestamptz>,
    }
}

diesel::table! {
    conversation_facts (id) {
        id -> Int8,
        workspace_id -> Int8,
        thread_id -> Int8,
        channel_id -> Int8,
        kind -> Int2,
        at -> Timestamptz,
        started_at -> Nullable<Timestamptz>,
        seconds -> Nullable<Int8>,
        business_seconds -> Nullable<Int8>,
        user_id -> Nullable<Int8>,
        team_id -> Nullable<Int8>,
    }
}

// The conversation reports' rollup and the facts not folded into it yet (migration
// 2026-11-30-000101_conversation_rollups); written by triggers and `conversation_rollups_fold()`,
// read with SQL by `PgReports`.
diesel::table! {
    conversation_rollups (workspace_id, measure, dim, level, block, key, kind) {
        workspace_id -> Int8,
        level -> Int2,
        block -> Date,
        measure -> Int2,
        dim -> Int2,
        key -> Int8,
        kind -> Int2,
        n -> Int8,
        total -> Int8,
        counts -> Nullable<Array<Int4>>,
    }
}

diesel::table! {
    conversation_facts_pending (fact_id) {
        fact_id -> Int8,
    }
}

// Threads whose history awaits its replay into the reports (migration
// 2026-11-28-000301_conversation_backfill).
diesel::table! {
    conversation_backfill (thread_id) {
        thread_id -> Int8,
        workspace_id -> Int8,
        upto_message_id -> Int8,
        noted_at -> Timestamptz,
    }
}
