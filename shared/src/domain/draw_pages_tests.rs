use sha2::{Digest, Sha256};

use super::*;

fn entry(key: u8) -> DrawnEntry {
    DrawnEntry {
        draw_key: format!("{key:064x}"),
        slot_us: None,
    }
}

fn keys(entries: &[DrawnEntry]) -> Vec<String> {
    entries
        .iter()
        .map(|e| e.draw_key[62..].to_owned())
        .collect()
}

fn first_plan(limit: usize) -> PagePlan {
    DrawCursor::FIRST
        .plan(limit, QueueShards::DEFAULT)
        .expect("the first page reads")
}

#[test]
fn a_page_ends_where_a_shard_with_more_has_not_read() {
    let reads = |a_more| {
        vec![
            (vec![entry(1), entry(4), entry(9)], a_more),
            (vec![entry(2), entry(3), entry(12)], false),
            (Vec::new(), false),
        ]
    };
    let plan = first_plan(10);
    // Shard 0 may hold keys between 9 and 12: the page stops at 9.
    let page = DrawCursor::FIRST.page(&plan, reads(true), 10);
    assert_eq!(keys(&page.entries), ["01", "02", "03", "04", "09"]);
    assert_eq!(page.next, Some(format!("{:064x}.5", 9)));
    // Every shard read to its end: the whole list, nothing follows.
    let page = DrawCursor::FIRST.page(&plan, reads(false), 10);
    assert_eq!((page.entries.len(), page.next), (6, None));
    // A limit cuts it after its fourth key, and the rest follows.
    let page = DrawCursor::FIRST.page(&plan, reads(false), 4);
    assert_eq!(page.next, Some(format!("{:064x}.4", 4)));
}

#[test]
fn a_range_read_in_full_goes_on_after_its_end() {
    let cursor = DrawCursor::parse(&format!("{:064x}.3", 2)).expect("a cursor");
    let plan = PagePlan {
        from: format!("{:064x}", 3),
        to: format!("{:064x}", 20),
        per_shard: 5,
    };
    let page = cursor.page(&plan, vec![(vec![entry(4), entry(9)], false)], 10);
    assert_eq!(keys(&page.entries), ["04", "09"]);
    assert_eq!(page.next, Some(format!("{:064x}.5", 20)));
    // Nothing in it: the next page starts after it all the same.
    let page = cursor.page(&plan, vec![(Vec::new(), false)], 10);
    assert_eq!(page.next, Some(format!("{:064x}.3", 20)));
}

#[test]
fn cursors_parse_as_documented() {
    let key = "ab".repeat(32);
    for (raw, ok) in [
        (key.clone(), true),
        (format!("{key}.0"), true),
        (format!("{key}.1234567890"), true),
        (format!("{key}."), false),
        (format!("{key}.12345678901"), false),
        (format!("{key}.-1"), false),
        (format!("{key}.1.2"), false),
        (key.to_uppercase(), false),
        (key[1..].to_owned(), false),
        ("XYZ".to_owned(), false),
    ] {
        assert_eq!(DrawCursor::parse(&raw).is_ok(), ok, "{raw}");
    }
}

#[test]
fn a_page_without_a_count_reads_a_share_of_each_shard() {
    for cursor in [
        DrawCursor::FIRST,
        DrawCursor::parse(&"1".repeat(64)).unwrap(),
    ] {
        for (limit, shards, per_shard) in [
            (1_000, QueueShards::DEFAULT, 8),
            (1_000, QueueShards::LEGACY, 32),
            (3, QueueShards::DEFAULT, 1),
        ] {
            let plan = cursor.plan(limit, shards).expect("a page");
            assert_eq!((plan.per_shard, plan.to.as_str()), (per_shard, LAST_KEY));
        }
    }
    assert_eq!(first_plan(5).from, "0".repeat(64));
    let after = DrawCursor::parse(&format!("{:064x}", 0x19)).unwrap();
    let plan = after.plan(5, QueueShards::DEFAULT).unwrap();
    assert_eq!(plan.from, format!("{:064x}", 0x1a));
    // After the last key nothing follows.
    assert_eq!(
        DrawCursor::parse(LAST_KEY)
            .unwrap()
            .plan(5, QueueShards::DEFAULT),
        None
    );
}

#[test]
fn a_counted_page_reads_a_range_sized_to_the_density() {
    // 1,000 entries up to a quarter of the keys: 4,000 in all; a page of
    // 1,000 reads about 900 of them, a range of about 0.9/16 of the keys.
    let quarter = format!("4{}", "0".repeat(63));
    let plan = DrawCursor::parse(&format!("{quarter}.1000"))
        .unwrap()
        .plan(1_000, QueueShards::DEFAULT)
        .unwrap();
    // The range holds (at the density so far) at most nine tenths of a
    // page, and not much less with a count of 1,000 to go on.
    let width = position(&plan.to) - position(&quarter);
    let entries = width as f64 * 4_000.0 / u64::MAX as f64;
    assert!((800.0..=900.0).contains(&entries), "{entries}");
    assert!(plan.to.ends_with(&"f".repeat(48)));
    // 7.8 a shard, read up to three deviations past it.
    assert_eq!(plan.per_shard, 19);
    // A count of one that late: the range runs to the last key.
    let late = DrawCursor::parse(&format!("f{}.1", "0".repeat(63))).unwrap();
    assert_eq!(late.plan(1_000, QueueShards::DEFAULT).unwrap().to, LAST_KEY);
}

/// `n` uniform keys over `shards`, as the draw spreads them: each
/// shard's keys in order.
fn drawn(n: u32, shards: QueueShards) -> Vec<Vec<String>> {
    let mut by_shard = vec![Vec::new(); usize::from(shards.count())];
    for i in 0..n {
        let hash = Sha256::digest(i.to_be_bytes());
        let shard = usize::from(hash[0]) % by_shard.len();
        by_shard[shard].push(hex::encode(Sha256::digest(hash)));
    }
    by_shard.iter_mut().for_each(|keys| keys.sort());
    by_shard
}

/// A shard read as the index answers it: keys in `[from, to]` in order,
/// at most `per_shard`, and more when it stopped at the limit.
fn read(keys: &[String], plan: &PagePlan) -> (Vec<DrawnEntry>, bool) {
    let found: Vec<DrawnEntry> = keys
        .iter()
        .filter(|k| **k >= plan.from && **k <= plan.to)
        .take(plan.per_shard)
        .map(|k| DrawnEntry {
            draw_key: k.clone(),
            slot_us: None,
        })
        .collect();
    let more = found.len() == plan.per_shard;
    (found, more)
}

/// Follows `next` from `cursor` to the end: the keys listed, the items
/// read in all, the most read by one page, and the pages.
fn follow(
    by_shard: &[Vec<String>],
    shards: QueueShards,
    mut cursor: DrawCursor,
    limit: usize,
) -> (Vec<String>, usize, usize, usize) {
    let (mut listed, mut read_in_all, mut most_read, mut pages) = (Vec::new(), 0, 0, 0);
    while let Some(plan) = cursor.plan(limit, shards) {
        let reads: Vec<_> = by_shard.iter().map(|keys| read(keys, &plan)).collect();
        let read_here: usize = reads.iter().map(|(found, _)| found.len()).sum();
        read_in_all += read_here;
        most_read = most_read.max(read_here);
        pages += 1;
        let page = cursor.page(&plan, reads, limit);
        assert!(page.entries.len() <= limit);
        listed.extend(page.entries.into_iter().map(|e| e.draw_key));
        match page.next {
            Some(next) => cursor = DrawCursor::parse(&next).expect("next parses"),
            None => break,
        }
    }
    (listed, read_in_all, most_read, pages)
}

#[test]
fn following_next_from_a_plain_key_lists_the_rest_at_a_bounded_cost() {
    let shards = QueueShards::DEFAULT;
    let by_shard = drawn(10_000, shards);
    let mut every: Vec<String> = by_shard.concat();
    every.sort();
    for limit in [7, 100, 1_000] {
        let after = DrawCursor::parse(&every[4_999]).unwrap();
        let (listed, read_in_all, most_read, _) = follow(&by_shard, shards, after, limit);
        assert_eq!(listed, every[5_000..], "{limit} a page");
        // The first page estimates the count from every shard's keys:
        // the pages after it read about what they return.
        assert!(
            read_in_all <= 5_000 * 6 / 5 + 1_024,
            "{read_in_all} read, {limit} a page"
        );
        assert!(
            most_read <= limit + 128,
            "{most_read} read in a page, {limit} a page"
        );
    }
}

#[test]
fn following_next_lists_every_key_once_reading_little_more_than_it_returns() {
    for (n, shards, limit) in [
        (10_000, QueueShards::DEFAULT, 1_000),
        (10_000, QueueShards::LEGACY, 1_000),
        (3_000, QueueShards::DEFAULT, 100),
        (500, QueueShards::DEFAULT, 7),
    ] {
        let by_shard = drawn(n, shards);
        let (listed, read_in_all, most_read, pages) =
            follow(&by_shard, shards, DrawCursor::FIRST, limit);
        let mut every: Vec<String> = by_shard.concat();
        every.sort();
        assert_eq!(listed, every, "{n} keys, {limit} a page");
        let shard_count = usize::from(shards.count());
        assert!(
            most_read <= limit + shard_count,
            "{most_read} read in a page"
        );
        // The first page's floor, one key a shard, and a fifth more.
        let bound = n as usize * 6 / 5 + shard_count;
        assert!(
            read_in_all <= bound,
            "{read_in_all} read for {n}, {limit} a page"
        );
        assert!(
            pages < n.div_ceil(limit as u32) as usize * 3 / 2 + 2,
            "{pages} pages"
        );
    }
}

#[test]
fn the_key_after_a_key_carries_over_f() {
    let key = |tail: &str| format!("{}{tail}", "0".repeat(64 - tail.len()));
    for (before, after) in [
        ("0", "1"),
        ("9", "a"),
        ("0f", "10"),
        ("9f", "a0"),
        ("aff", "b00"),
    ] {
        assert_eq!(successor(&key(before)), Some(key(after)), "{before}");
    }
    assert_eq!(successor(LAST_KEY), None);
}

#[test]
fn every_plan_reads_forward_from_after_its_cursor() {
    let low_fs = format!("{}{}", "3".repeat(16), "f".repeat(48));
    for raw in [
        format!("{low_fs}.5"),
        format!("{}.7", "0".repeat(64)),
        format!("{}.0001", "1".repeat(64)),
        format!("{}.9999999999", "8".repeat(64)),
        format!("{}.1", "e".repeat(64)),
    ] {
        let cursor = DrawCursor::parse(&raw).expect("a cursor");
        let plan = cursor.plan(100, QueueShards::DEFAULT).expect("a page");
        assert!(
            *plan.from > raw[..64] && plan.from <= plan.to,
            "{raw}: {plan:?}"
        );
    }
}

#[test]
fn a_count_never_outgrows_its_digits() {
    let cursor = DrawCursor::parse(&format!("{}.9999999999", "8".repeat(64))).unwrap();
    let plan = cursor.plan(10, QueueShards::DEFAULT).unwrap();
    let inside = DrawnEntry {
        draw_key: format!("{}9", "8".repeat(63)),
        slot_us: None,
    };
    let next = cursor.page(&plan, vec![(vec![inside], false)], 10).next;
    let next = next.expect("more follows");
    assert!(next.ends_with(".9999999999"), "{next}");
    assert!(DrawCursor::parse(&next).is_ok());
}

#[test]
fn a_count_is_estimated_from_every_shard_and_never_from_a_few_keys() {
    // Three keys just after a plain key: too few to tell the density (as
    // found, about 3 × 2^28 before them), so the next page learns afresh.
    let after = DrawCursor::parse(&format!("1{}", "0".repeat(63))).unwrap();
    let plan = after.plan(100, QueueShards::DEFAULT).unwrap();
    let close = |n: u8| DrawnEntry {
        draw_key: format!("10000001{n:056x}"),
        slot_us: None,
    };
    let page = after.page(&plan, vec![(vec![close(1), close(2), close(3)], true)], 100);
    assert_eq!(page.next, Some(close(3).draw_key.clone()));
    // A key from each of 100 shards, each its shard's first past a
    // sixteenth of the keys: about 100 × 16 entries before the last.
    let sixteenth = |n: u64| DrawnEntry {
        draw_key: format!(
            "{:016x}{}",
            (u64::MAX / 16) + n * (u64::MAX / 16_000),
            "0".repeat(48)
        ),
        slot_us: None,
    };
    let after = DrawCursor::parse(&format!("{:016x}{}", u64::MAX / 16, "0".repeat(48))).unwrap();
    let plan = after.plan(100, QueueShards::new(128).unwrap()).unwrap();
    let reads = (1..=100).map(|n| (vec![sixteenth(n)], true)).collect();
    let next = after.page(&plan, reads, 100).next.expect("more follows");
    let count: f64 = next.split_once('.').expect("a count").1.parse().unwrap();
    assert!((1_000.0..=1_800.0).contains(&count), "{count}");
}
