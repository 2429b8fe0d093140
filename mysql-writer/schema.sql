-- SPDX-License-Identifier: BSD-3-Clause
-- schema.sql - the MariaDB schema of seckill-mysql-writer (docs/mysql.md).
-- Applied by the writer at start-up and by "seckill-mysql-writer migrate":
-- every statement is idempotent (CREATE ... IF NOT EXISTS), so it runs
-- again safely. The writer splits this file at ";" ending a line: keep one
-- statement per ";" and no ";" at a line end inside a statement.
-- Counters are unsigned and never subtracted in SQL (see the guard below).

-- One row per item on sale: made by the "activity" event, moved by the
-- order events. sold, returned and paid mean what the LMDB ledger's
-- fields of the same names mean (docs/storage.md): sold = units of every
-- order line ever written, returned = units given back (cancelled or
-- refunded), paid = units of paid lines. Live units = sold - returned.
-- added and removed are the restocked units and the unsold units taken
-- back ("restocked", "removed" events); paused_ns is set while the sale
-- is paused ("paused", "resumed").
CREATE TABLE IF NOT EXISTS items (
	id             INT UNSIGNED    NOT NULL PRIMARY KEY,
	name           VARCHAR(64)     NULL,
	total          BIGINT UNSIGNED NOT NULL DEFAULT 0,
	added          BIGINT UNSIGNED NOT NULL DEFAULT 0,
	removed        BIGINT UNSIGNED NOT NULL DEFAULT 0,
	sold           BIGINT UNSIGNED NOT NULL DEFAULT 0,
	returned       BIGINT UNSIGNED NOT NULL DEFAULT 0,
	paid           BIGINT UNSIGNED NOT NULL DEFAULT 0,
	per_user_limit INT UNSIGNED    NOT NULL DEFAULT 1,
	price          BIGINT UNSIGNED NULL,
	start_ns       BIGINT          NULL,
	end_ns         BIGINT          NULL,
	closed_ns      BIGINT          NULL,
	paused_ns      BIGINT          NULL,
	updated_ns     BIGINT          NOT NULL DEFAULT 0
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The columns added with the appliance's day-2 events, for a database
-- made before them.
ALTER TABLE items ADD COLUMN IF NOT EXISTS removed BIGINT UNSIGNED NOT NULL DEFAULT 0 AFTER added;
ALTER TABLE items ADD COLUMN IF NOT EXISTS paused_ns BIGINT NULL AFTER closed_ns;

-- One row per confirmed order (the "confirmed" message of seckill.orders).
-- state follows the events: confirmed -> paid | cancelled, paid ->
-- partially_refunded -> refunded. written_ns is the writer's clock when it
-- wrote the row (in the batch's transaction): written_ns - confirmed_ns is
-- the export lag the benchmark reports.
CREATE TABLE IF NOT EXISTS orders (
	id           BIGINT UNSIGNED NOT NULL PRIMARY KEY,
	user_id      BIGINT UNSIGNED NOT NULL,
	state        ENUM('confirmed', 'paid', 'cancelled', 'partially_refunded', 'refunded') NOT NULL,
	units        BIGINT UNSIGNED NOT NULL,
	nlines       SMALLINT UNSIGNED NOT NULL,
	client_ip    VARCHAR(45)     NULL,
	sold_ns      BIGINT          NOT NULL,
	confirmed_ns BIGINT          NOT NULL,
	updated_ns   BIGINT          NOT NULL,
	seq          BIGINT UNSIGNED NOT NULL,
	written_ns   BIGINT          NOT NULL,
	KEY orders_user (user_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- One row per order line. The per-user guard: guard_user is the buyer
-- while the line is live (not cancelled, not wholly refunded) and its
-- item's per-user limit was 1 when the line was written, else NULL; the
-- UNIQUE (item_id, guard_user) index then allows one live line per (item,
-- user) for those items and never compares NULLs. A generated column can
-- only read its own row, hence the copy of the limit in one_per_user.
CREATE TABLE IF NOT EXISTS order_lines (
	order_id     BIGINT UNSIGNED  NOT NULL,
	line         TINYINT UNSIGNED NOT NULL,
	item_id      INT UNSIGNED     NOT NULL,
	user_id      BIGINT UNSIGNED  NOT NULL,
	qty          INT UNSIGNED     NOT NULL,
	price        BIGINT UNSIGNED  NOT NULL,
	refunded     INT UNSIGNED     NOT NULL DEFAULT 0,
	one_per_user TINYINT(1)       NOT NULL,
	live         TINYINT(1)       NOT NULL DEFAULT 1,
	guard_user   BIGINT UNSIGNED AS (IF(one_per_user = 1 AND live = 1, user_id, NULL)) PERSISTENT,
	PRIMARY KEY (order_id, line),
	UNIQUE KEY one_live_line_per_user (item_id, guard_user),
	KEY order_lines_item (item_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Every event applied, keyed by its seq (the position in the appliance's
-- event log, unique across both topics): the idempotence check. Orders'
-- events and item events (order_id NULL) alike. outcome: applied, refused
-- (an anomaly the writer counted and logged: the state did not move),
-- conflict (pay_conflict: recorded only).
CREATE TABLE IF NOT EXISTS order_events (
	seq        BIGINT UNSIGNED NOT NULL PRIMARY KEY,
	type       VARCHAR(16)     NOT NULL,
	order_id   BIGINT UNSIGNED NULL,
	user_id    BIGINT UNSIGNED NOT NULL,
	item_id    INT UNSIGNED    NOT NULL,
	units      BIGINT UNSIGNED NOT NULL,
	time_ns    BIGINT          NOT NULL,
	request    VARCHAR(128)    NULL,
	outcome    VARCHAR(16)     NOT NULL,
	UNIQUE KEY order_events_order_seq (order_id, seq),
	KEY order_events_item (item_id)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- Messages that arrived before what they depend on (the other topic is
-- behind): an event of an order not written yet, an order of an item not
-- created yet, an order the guards refuse until a restock, a cancel or a
-- refund arrives. Kept with the raw message and retried after each batch
-- that applied something (and every second while any is here); applied
-- ones are deleted. reason: order, item, stock, user, behind, sql (MariaDB
-- refused the message's data). refused: a guard refused it while the
-- writer had consumed everything there was (a refusal, logged and
-- counted), not merely before the other topic caught up (a wait); it
-- holds no other order back. final (below): parked for good, not retried.
CREATE TABLE IF NOT EXISTS parked (
	seq       BIGINT UNSIGNED NOT NULL PRIMARY KEY,
	reason    VARCHAR(16)     NOT NULL,
	payload   MEDIUMTEXT      NOT NULL,
	refused   TINYINT(1)      NOT NULL DEFAULT 0,
	parked_ns BIGINT          NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;

-- The order barrier (docs/mysql.md, "Event ordering"): a message waits
-- behind a parked one it must follow. type and order_id say which: an
-- order behind any earlier parked order, an order's event behind an
-- earlier parked message of the same order. Added to parked tables made
-- before the barrier (their rows have NULLs and hold nothing back).
ALTER TABLE parked ADD COLUMN IF NOT EXISTS type VARCHAR(16) NULL;
ALTER TABLE parked ADD COLUMN IF NOT EXISTS order_id BIGINT UNSIGNED NULL;
CREATE INDEX IF NOT EXISTS parked_order ON parked (order_id, seq);

-- Parked for good (docs/mysql.md, "Parked for good"): final = 1 when
-- MariaDB refused the message's data (reason sql), or when a retry found
-- a row of reason item still blocked --park-final-seconds after it was
-- parked with the writer caught up; no other reason is ever final. A
-- final row is never retried and holds no other order back (refused = 1
-- too), only the later events of its own order; an operator requeues it
-- (final = 0, refused = 0) or deletes it. The retries page through the
-- rows that are not final by seq.
ALTER TABLE parked ADD COLUMN IF NOT EXISTS final TINYINT(1) NOT NULL DEFAULT 0 AFTER refused;
CREATE INDEX IF NOT EXISTS parked_final ON parked (final, seq);
CREATE INDEX IF NOT EXISTS parked_refused ON parked (refused, seq);
-- A writer before this rule made rows of any reason final: those of
-- reasons that resolve by themselves are retried again.
UPDATE parked SET final = 0, refused = reason IN ('stock', 'user') AND refused
 WHERE final = 1 AND reason NOT IN ('item', 'sql');

-- The buyer's address of either family: IPv6 text is up to 45 characters
-- (orders tables made before held 15, IPv4 only). Widening a VARCHAR whose
-- length byte stays one byte is done in place; run again it changes nothing.
ALTER TABLE orders MODIFY COLUMN client_ip VARCHAR(45) NULL;
