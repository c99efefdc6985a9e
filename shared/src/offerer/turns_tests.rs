//! `Turns`: whose turn it is, traced by hand.
use super::*;

fn events(names: &[&str]) -> Vec<EventId> {
    names.iter().map(|n| EventId::parse(n).unwrap()).collect()
}

fn started(turns: &mut Turns) -> Vec<String> {
    std::iter::from_fn(|| turns.start())
        .map(|e| e.as_str().to_owned())
        .collect()
}

#[test]
fn every_listed_waitlist_gets_its_turn_and_none_twice_at_once() {
    let all = events(&["e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9"]);
    let mut turns = Turns::default();
    turns.listed(&all);
    // Eight at once, from the front.
    assert_eq!(
        started(&mut turns),
        ["e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7"]
    );
    // Next tick, all eight still visiting: the two left keep their
    // place, nobody is queued twice, nothing starts.
    turns.listed(&all);
    assert_eq!(started(&mut turns), Vec::<String>::new());
    // One visit ends: the first of those left goes, not e0 again.
    turns.ended(&all[0]);
    assert_eq!(started(&mut turns), ["e8"]);
    // e0, visited, joins the back at the next tick, behind e9.
    turns.listed(&all);
    for event in &all[1..4] {
        turns.ended(event);
    }
    assert_eq!(started(&mut turns), ["e9", "e0"]);
    assert!(turns.visiting(&all[0]) && !turns.visiting(&all[1]));
    assert_eq!(turns.visits(), 7);
}

#[test]
fn a_waitlist_no_longer_listed_leaves_the_line() {
    let all = events(&["a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"]);
    let mut turns = Turns::default();
    turns.listed(&all);
    assert_eq!(started(&mut turns).len(), VISITS_AT_ONCE);
    // a9 waits; its waitlist is deleted before its turn.
    turns.listed(&all[..8]);
    turns.ended(&all[0]);
    assert_eq!(started(&mut turns), Vec::<String>::new());
}
