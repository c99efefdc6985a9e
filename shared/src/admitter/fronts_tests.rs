use super::*;
use crate::domain::VisitorId;

fn visitor(rank: u128) -> IndexedVisitor {
    IndexedVisitor {
        visitor_id: VisitorId::parse(&format!("v{rank}")).expect("a short id parses"),
        rank: QueueRank(rank),
        joined_ms: 5,
    }
}

#[test]
fn a_front_keeps_a_page_and_knows_up_to_what_it_kept() {
    let mut front = ShardFront::default();
    let none = HashMap::new();
    front.absorb((1..=4).map(visitor).collect(), true, &none, 8);
    assert_eq!((front.read_to, front.more), (Some(QueueRank(4)), true));
    // The index had nothing past 9: read to its end.
    front.absorb((5..=9).map(visitor).collect(), false, &none, 8);
    // Nine is more than a page: the highest goes, to be read again.
    assert_eq!(front.waiting.len(), 8);
    assert_eq!((front.read_to, front.more), (Some(QueueRank(8)), true));
    // A full page from a little back knows up to its own end only.
    let mut front = ShardFront::default();
    front.absorb((1..=6).map(visitor).collect(), false, &none, 8);
    front.absorb((2..=4).map(visitor).collect(), true, &none, 8);
    assert_eq!(
        (front.read_to, front.waiting.len()),
        (Some(QueueRank(4)), 6)
    );
    // One admitted here lately stays out.
    let admitted = HashMap::from([(QueueRank(7), 0)]);
    front.absorb(vec![visitor(7)], false, &admitted, 8);
    assert!(!front.waiting.contains_key(&QueueRank(7)));
}

#[test]
fn the_head_ends_where_a_shard_has_not_read() {
    let none = HashMap::new();
    let mut shards = empty_fronts();
    shards[0].absorb([1, 4, 9].map(visitor).to_vec(), true, &none, 8);
    shards[1].absorb([2, 3, 12].map(visitor).to_vec(), false, &none, 8);
    let head = head_of(&shards, &JoinCounts::default(), 0, 8);
    let ranks: Vec<u128> = head.visitors.iter().map(|v| v.rank.0).collect();
    assert_eq!(ranks, [1, 2, 3, 4, 9], "12 is past shard 0's last read");
    assert_eq!((head.known_to, head.whole), (QueueRank(10), false));
    shards[0].more = false;
    assert!(head_of(&shards, &JoinCounts::default(), 0, 8).whole);
}
