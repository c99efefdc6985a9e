use super::*;
use crate::domain::queue_shards::QueueShards;
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
    let mut shards = empty_fronts(QueueShards::LEGACY);
    shards[0].absorb([1, 4, 9].map(visitor).to_vec(), true, &none, 8);
    shards[1].absorb([2, 3, 12].map(visitor).to_vec(), false, &none, 8);
    let head = head_of(&shards, &JoinCounts::default(), 0, 8);
    let ranks: Vec<u128> = head.visitors.iter().map(|v| v.rank.0).collect();
    assert_eq!(ranks, [1, 2, 3, 4, 9], "12 is past shard 0's last read");
    assert_eq!((head.known_to, head.whole), (QueueRank(10), false));
    shards[0].more = false;
    assert!(head_of(&shards, &JoinCounts::default(), 0, 8).whole);
}

/// A case: its name, the ranks read, whether the index had more, whether
/// the queue is settling, and where the front should read from.
type ReadFromCase = (
    &'static str,
    Vec<u128>,
    bool,
    bool,
    Option<Option<QueueRank>>,
);

#[test]
fn a_front_among_the_drawn_is_read_again_from_the_first() {
    let none = HashMap::new();
    let later = first_rank_joined_at(10_000).0;
    let cases: [ReadFromCase; 6] = [
        ("settling", vec![1, 2, 3], true, true, Some(None)),
        ("nothing read yet", vec![], false, false, Some(None)),
        ("drawn, full", vec![1, 2, 3], true, false, None),
        ("drawn, short", vec![1], true, false, Some(None)),
        (
            "drawn, index ended",
            vec![1, 2, 3],
            false,
            false,
            Some(None),
        ),
        (
            "later, short",
            vec![later],
            true,
            false,
            Some(Some(QueueRank(later))),
        ),
    ];
    for (name, ranks, more, settling, want) in cases {
        let mut front = ShardFront::default();
        if !ranks.is_empty() {
            front.absorb(ranks.into_iter().map(visitor).collect(), more, &none, 8);
        }
        assert_eq!(read_from(&front, settling, 2), want, "{name}");
    }
    // Later joiners whose index had nothing more: a little back, where an
    // entry shown late would sort.
    let mut front = ShardFront::default();
    front.absorb(vec![visitor(later)], false, &none, 8);
    let from = read_from(&front, false, 2)
        .flatten()
        .expect("read from a rank");
    assert!(from < QueueRank(later) && joined_at_of(QueueRank(from.0 + 1)).is_some());
}
