//! The line memory's unit tests.

use super::*;
use crate::domain::waitlist_entry::WaitingIndex;

fn shard(n: u8) -> IndexShard {
    IndexShard {
        index: WaitingIndex {
            section: None,
            quantity: 1,
            together: false,
            wheelchair: 0,
        },
        shard: n,
    }
}

fn read(places: usize) -> ShardRead {
    let head = |i: usize| IndexHead {
        join_key: format!("{i:013}#e{i}"),
        entry: EntryId::parse(&format!("00000000-0000-4000-8000-00000000000{i}")).unwrap(),
    };
    ShardRead {
        places: (0..places).map(head).collect(),
        more: places > 0,
    }
}

#[test]
fn a_shard_with_a_head_is_kept_and_an_empty_one_with_the_ends_before_it() {
    let memory = Memory::default();
    let event = EventId::parse("ev-lines").unwrap();
    let mut line = LineRead::default();
    line.shards.insert(shard(0), read(1));
    line.shards.insert(shard(1), read(0));
    let shards = |line: &LineRead| {
        let mut kept: Vec<u8> = line.shards.keys().map(|s| s.shard).collect();
        kept.sort();
        kept
    };
    memory.remember_line(&event, 1, Millis(1_000), line.clone());
    assert_eq!(shards(&memory.recall_line(&event, 1)), vec![0]);
    line.ends = Some(vec![vec!["k".into()]]);
    memory.remember_line(&event, 1, Millis(1_000), line);
    let kept = memory.recall_line(&event, 1);
    assert_eq!(shards(&kept), vec![0, 1]);
    assert!(
        !kept.shards[&shard(1)].more,
        "an empty shard read to its end"
    );
    assert_eq!(kept.shards[&shard(0)].places.len(), 1);
    // A shard read to its end may have gained a join by then.
    let mut line = kept.clone();
    line.shards.get_mut(&shard(0)).unwrap().more = false;
    memory.remember_line(&event, 1, Millis(2_000), line);
    assert!(memory.recall_line(&event, 1).shards[&shard(0)].more);
    // Another generation's line is another line.
    assert!(memory.recall_line(&event, 2).shards.is_empty());
}
