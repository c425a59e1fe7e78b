CREATE TABLE orders_demo.tbl__legacy_sessions (
    session_id String,
    _replay_timestamp DateTime64(3)
) ENGINE = MergeTree()
ORDER BY (_replay_timestamp);
