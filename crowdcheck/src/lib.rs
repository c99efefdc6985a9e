//! The crowd's checks, used by the bench and the tests: the capacity meter
//! (what DynamoDB would serve of a crowd's requests, key by key and table
//! by table, and its own throttling answers) and the history checker
//! (whether every answer a crowd got is explained by one order of events).

pub mod capacity;
pub mod history;
