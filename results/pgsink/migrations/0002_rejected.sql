-- rejected: results stream entries that could not become an observation
-- (an item that is not JSON, or has no id), kept with why instead of
-- being dropped. stream_id is the entry's ID, so a redelivered entry adds
-- no row; fields are the entry's raw fields (a value that is not valid
-- UTF-8 text is kept as {"base64": "…"}).
CREATE TABLE rejected (
    stream_id   text        PRIMARY KEY,
    fields      jsonb       NOT NULL,
    reason      text        NOT NULL,
    rejected_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rejected_time ON rejected (rejected_at);
