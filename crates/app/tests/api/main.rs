//! Integration tests: the real server on a loopback port, each test on its own fresh database.

mod credentials;
mod helpers;

mod api_keys;
mod assistant_analytics;
mod assistant_contacts;
mod assistant_endpoints;
mod assistant_helpers;
mod assistant_mcp;
mod assistant_overview;
mod auth;
mod cli;
mod connectors;
mod dev;
mod docs_search;
mod docs_stand_in;
mod health;
mod messages_concurrency;
mod pages;
mod pages_browser;
mod pool;
mod rate_limit;
mod rest_channels;
mod rest_contract;
mod rest_messages;
mod rest_openapi;
mod rest_threads;
mod rest_users;
mod seed;
mod webhooks_api;
mod webhooks_crash;
mod webhooks_delivery;
mod webhooks_receiver;
mod webhooks_verify;
