-- alert_rules: what a user wants to hear about (crawlq alert add). A rule
-- names its items by ids (alert_rule_items), by words every title holds
-- (query_words) or by the schedule that observes them (schedule); with
-- none of them, every item of the site. It fires on a change between an
-- item's previous priced observation and a new one: a fall of at least
-- drop_pct percent, a price falling to below (kopecks) or under from
-- above it, or the item coming back in stock.
CREATE TABLE alert_rules (
    name          text             PRIMARY KEY,
    site          text             NOT NULL,
    by_ids        boolean          NOT NULL DEFAULT false,
    query_words   text[],
    schedule      text,
    drop_pct      double precision,
    below         bigint,
    back_in_stock boolean          NOT NULL DEFAULT false,
    webhook       text             NOT NULL,
    created_at    timestamptz      NOT NULL DEFAULT now()
);

CREATE TABLE alert_rule_items (
    site text NOT NULL,
    id   text NOT NULL,
    rule text NOT NULL REFERENCES alert_rules (name) ON DELETE CASCADE,
    PRIMARY KEY (site, id, rule)
);

-- alert_outbox: the alerts the sink decided, in the transaction that
-- wrote their observations. key is rule:site:id:entry (the observation's
-- stream ID), so a redelivered entry adds no second alert; the sender
-- posts each with it as Idempotency-Key until the webhook answers 2xx
-- (delivered_at) or it gives up (failed_at). next_try is also the lease
-- of a sender that took the row.
CREATE TABLE alert_outbox (
    key          text        PRIMARY KEY,
    rule         text        NOT NULL,
    site         text        NOT NULL,
    id           text        NOT NULL,
    webhook      text        NOT NULL,
    payload      jsonb       NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    attempts     integer     NOT NULL DEFAULT 0,
    next_try     timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz,
    failed_at    timestamptz,
    last_status  integer,
    last_error   text,
    last_try     timestamptz
);
CREATE INDEX alert_outbox_due ON alert_outbox (next_try) WHERE delivered_at IS NULL AND failed_at IS NULL;
