//! The integration suite, one binary: every module runs against this
//! process's DynamoDB Local (see testkit), through the same handlers the
//! Lambda binaries call. One binary links the SDK once, not twenty times.

// All of it is test code, helpers included: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

mod access;
mod api;
mod artifacts;
mod best_available;
mod best_available_bounds;
mod buyer_limits;
mod buyers;
mod confirm;
mod create_event;
mod crowd;
mod docs_config;
mod docs_map;
mod draw;
mod draw_list;
mod faults;
mod ga;
mod history;
mod invariants;
mod modules;
mod openapi;
mod orders;
mod publish;
mod publish_waitlist;
mod queue;
mod queue_flood;
mod queue_races;
mod resale;
mod resale_places;
mod retry_safe;
mod returns;
mod returns_places;
mod round_trips;
mod samples;
mod seat_map;
mod secrets;
mod stadium;
mod stripe;
mod throttling;
mod tokens;
mod upward;
mod waitlist;
mod waitlist_crowd;
mod waitlist_entries;
mod waitlist_faults;
mod waitlist_heads;
mod waitlist_history;
mod waitlist_limits;
mod waitlist_offers;
mod waitlist_places;
mod waitlist_positions;
mod waitlist_sale;
mod waitlist_tick;
