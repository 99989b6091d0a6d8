use super::overlap;

#[test]
fn chunks_the_snapshot_already_holds_are_taken_once() {
    // Pushed before the read: in the snapshot and on the feed.
    assert_eq!(overlap(&["a", "b", "c"], &["b", "c"]), 2);
    // Pushed after the read: on the feed only.
    assert_eq!(overlap(&["a", "b"], &["c", "d"]), 0);
    // Both: the first is a repeat, the second is new.
    assert_eq!(overlap(&["a", "b", "c"], &["c", "d"]), 1);
    // Nothing early, or nothing kept.
    assert_eq!(overlap::<&str>(&["a"], &[]), 0);
    assert_eq!(overlap(&[], &["a"]), 0);
}
