-- items: the latest state of every (site, id) the sink has seen.
CREATE TABLE items (
    site       text        NOT NULL,
    id         text        NOT NULL,
    title      text        NOT NULL DEFAULT '',
    price      bigint,
    old_price  bigint,
    currency   text        NOT NULL DEFAULT '',
    seller     text,
    rating     double precision,
    reviews    integer,
    in_stock   boolean,
    url        text        NOT NULL DEFAULT '',
    first_seen timestamptz NOT NULL,
    last_seen  timestamptz NOT NULL,
    PRIMARY KEY (site, id)
);

-- observations: one row per results stream entry (entry_ms-entry_seq is
-- its stream ID, so a redelivered entry adds no row): the price history.
CREATE TABLE observations (
    entry_ms    bigint      NOT NULL,
    entry_seq   bigint      NOT NULL,
    site        text        NOT NULL,
    id          text        NOT NULL,
    observed_at timestamptz NOT NULL,
    price       bigint,
    old_price   bigint,
    in_stock    boolean,
    seller      text,
    rating      double precision,
    reviews     integer,
    task        text        NOT NULL,
    schedule    text,
    PRIMARY KEY (entry_ms, entry_seq)
);
CREATE INDEX observations_item ON observations (site, id, observed_at);
CREATE INDEX observations_time ON observations (observed_at);
