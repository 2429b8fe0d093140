/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to the admin API (control/admin/sk_admin*.c): what its files share.
 *
 *   sk_admin.c             routing (sk_admin_handle), /healthz, /metrics
 *   sk_admin_json.c        replies and JSON helpers
 *   sk_admin_orders.c      GET /v1/orders (queries), GET /v1/orders/{id}, POST
 *                          /v1/orders/{id}/pay and /refund
 *   sk_admin_items.c       GET /v1/items[/{id}], GET /v1/activities[/{id}]
 *   sk_admin_activities.c  POST /v1/activities, .../{id}/close, /restock, /remove,
 *                          /pause, /resume, /extend
 *   sk_admin_http.c        libmicrohttpd glue and the listeners
 *   sk_admin_guard.c       the Host / Origin / Content-Type checks (sk_admin_guard)
 *   sk_admin_auth.c        the bearer token of the TCP listener (file, check)
 *   sk_admin_reserve.c     GET and POST /v1/activities/{id}/reservations
 *   sk_admin_live.c        GET /v1/live, POST /v1/live/limits, /log, /deny, /keys
 *   sk_admin_dashboard.c   GET /dashboard and its files (made by control/admin/dashboard/embed.py)
 *
 * Every route handler answers through @r and returns 0, or -ENOMEM with
 * nothing to free. Nothing outside these files includes this.
 */
#ifndef SK_ADMIN_IMPL_H
#define SK_ADMIN_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "sk_admin.h"
#include "sk_common.h"

#define CT_JSON "application/json"
#define CT_TEXT "text/plain; charset=utf-8"
#define CT_PROM "text/plain; version=0.0.4; charset=utf-8"

/* ------------------------------------------------------- sk_admin_json.c */

/* adm_reply_json - set @r from @j (consumed; NULL = -ENOMEM). */
int adm_reply_json(struct sk_admin_reply *r, unsigned status, json_t *j);
/* adm_reply_error - @status with {"error":@msg}. */
int adm_reply_error(struct sk_admin_reply *r, unsigned status, const char *msg);
/* adm_reply_text - @status with a copy of @text as body, of type @ct (static). */
int adm_reply_text(struct sk_admin_reply *r, unsigned status, const char *ct, const char *text);
/* adm_jint - a JSON integer of a count, price or item id (bounded far below INT64_MAX). */
json_t *adm_jint(uint64_t v);
/* adm_id_string - a 64-bit id (order, user) as a JSON string of its decimal text. */
json_t *adm_id_string(uint64_t id);
/*
 * adm_parse_body - the JSON object of a request body; NULL with a 400 in
 * @r (*rc = its result) when absent or not an object. The caller decrefs.
 */
json_t *adm_parse_body(const char *body, size_t len, struct sk_admin_reply *r, int *rc);
/*
 * adm_get_u64 - member @key of @o as an integer in [lo, hi]: 1 found, 0
 * absent (or null when @null_ok), -1 wrong (400 in @r, *rc its result).
 */
int adm_get_u64(json_t *o, const char *key, uint64_t lo, uint64_t hi, bool null_ok, uint64_t *v,
		struct sk_admin_reply *r, int *rc);

/* ----------------------------------------------------- sk_admin_orders.c */

int adm_get_order(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r);
/* adm_get_orders - GET /v1/orders?@query: an item's orders by user or state (a page). */
int adm_get_orders(struct sk_control *ctl, const char *query, struct sk_admin_reply *r);
int adm_pay_order(struct sk_control *ctl, uint64_t id, unsigned wait_ms, struct sk_admin_reply *r);
/* adm_refund_order - POST /v1/orders/{id}/refund, body {"units","item","request"} (optional). */
int adm_refund_order(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		     unsigned wait_ms, struct sk_admin_reply *r);

/* ------------------------------------------------------- sk_admin_live.c */

/* adm_get_live - GET /v1/live: the live settings now and each lcore's generation. */
int adm_get_live(struct sk_control *ctl, struct sk_admin_reply *r);
/* adm_post_live_limits - POST /v1/live/limits {"user_rate":N, ...}. */
int adm_post_live_limits(struct sk_control *ctl, const char *body, size_t len,
			 struct sk_admin_reply *r);
/* adm_post_live_log - POST /v1/live/log {"level":NAME}. */
int adm_post_live_log(struct sk_control *ctl, const char *body, size_t len,
		      struct sk_admin_reply *r);
/* adm_post_live_deny - POST /v1/live/deny {"users_file","prefixes_file"} or {"clear":true}. */
int adm_post_live_deny(struct sk_control *ctl, const char *body, size_t len,
		       struct sk_admin_reply *r);
/* adm_post_live_keys - POST /v1/live/keys {"add","file"}, {"sign"}, {"default"}, {"remove"}. */
int adm_post_live_keys(struct sk_control *ctl, const char *body, size_t len,
		       struct sk_admin_reply *r);

/* ------------------------------------------------------ sk_admin_items.c */

/* adm_item_json - the JSON object of one item (arena, activity, ledger); NULL: no memory. */
json_t *adm_item_json(const struct sk_control_item *it);
int adm_get_items(struct sk_control *ctl, struct sk_admin_reply *r);
/* adm_get_cluster_item - GET /v1/cluster/items/{id}: the member's view of a cluster item. */
int adm_get_cluster_item(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r);
/* adm_post_cluster_forget - POST /v1/cluster/items/{id}/forget {"member","held"}. */
int adm_post_cluster_forget(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
			    struct sk_admin_reply *r);
int adm_get_item(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r);
int adm_get_activities(struct sk_control *ctl, struct sk_admin_reply *r);
int adm_get_activity(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r);

/* ---------------------------------------------------- sk_admin_reserve.c */

/* adm_get_reservations - GET /v1/activities/{id}/reservations: {"item","reserved"}. */
int adm_get_reservations(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r);
/* adm_post_reservations - POST /v1/activities/{id}/reservations: text/plain,
 * one user id per line; {"item","added","reserved"}; 400 naming a bad line,
 * 507 when the sets are full (nothing added either way). */
int adm_post_reservations(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
			  struct sk_admin_reply *r);

/* ------------------------------------------------- sk_admin_activities.c */

int adm_post_activity(struct sk_control *ctl, const char *body, size_t len,
		      struct sk_admin_reply *r);
int adm_post_close(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r);
int adm_post_restock(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		     struct sk_admin_reply *r);
/* adm_post_remove - POST /v1/activities/{id}/remove, body {"units":N,"request_id":R}. */
int adm_post_remove(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		    struct sk_admin_reply *r);
/* adm_post_pause - POST /v1/activities/{id}/pause (@paused) or /resume; no body. */
int adm_post_pause(struct sk_control *ctl, uint64_t id, bool paused, struct sk_admin_reply *r);
/*
 * adm_post_archive - POST /v1/activities/{id}/archive; no body: the
 * activity's archive record (200), or 409 naming why it cannot be yet.
 */
int adm_post_archive(struct sk_control *ctl, uint64_t id, struct sk_admin_reply *r);
/* adm_archive_json - the archive record of @item as JSON, or JSON null if none. */
json_t *adm_archive_json(struct sk_control *ctl, uint32_t item);
/* adm_post_extend - POST /v1/activities/{id}/extend, body {"end_ns":N|null}. */
int adm_post_extend(struct sk_control *ctl, uint64_t id, const char *body, size_t len,
		    struct sk_admin_reply *r);

/* ------------------------------------------------------ sk_admin_auth.c */

/* Bytes of a token's digest (SHA-256). */
#define ADM_TOKEN_DIGEST 32

/* What adm_token_check() found in a request. */
enum adm_auth {
	ADM_AUTH_OK,	    /* "Bearer <the token>" */
	ADM_AUTH_MISSING,   /* no Authorization header */
	ADM_AUTH_MALFORMED, /* another scheme than Bearer */
	ADM_AUTH_WRONG,	    /* Bearer with another token (or none) */
};

/*
 * adm_token_load - the SHA-256 of the token in the file at @path into
 * @digest. The file must be a regular file owned by this user or root,
 * with no permission bit for group or others, holding one b64token of
 * SK_ADMIN_TOKEN_MIN..SK_ADMIN_TOKEN_MAX bytes and at most one line end.
 * Returns 0, or -errno of open(2)/read(2), -EPERM (group/other bits, or
 * another owner), -EINVAL (not a regular file, or a bad token) with @err
 * set, naming the file and --admin-token-file. The token is wiped from
 * memory after hashing.
 */
int adm_token_load(const char *path, uint8_t digest[ADM_TOKEN_DIGEST], char *err, size_t errlen);

/*
 * adm_token_check - whether the Authorization header @authorization (NULL:
 * absent) is "Bearer " (case-insensitive) and the token of @digest. The
 * comparison is of SHA-256 digests with CRYPTO_memcmp(): constant time in
 * the token's bytes and length. Thread-safe.
 */
enum adm_auth adm_token_check(const uint8_t digest[ADM_TOKEN_DIGEST], const char *authorization);

/* -------------------------------------------------- sk_admin_dashboard.c */

/*
 * One file of the dashboard, embedded at build time: the generated
 * sk_dashboard_assets.c (control/admin/dashboard/embed.py) defines the table.
 */
struct adm_asset {
	const char *name;	   /* file name, e.g. "dashboard.js" */
	const char *type;	   /* Content-Type */
	const unsigned char *data; /* its bytes */
	size_t len;		   /* bytes at data */
};

/* The files of control/admin/dashboard/, in the order given to embed.py. */
extern const struct adm_asset adm_dashboard_assets[];
/* Entries of adm_dashboard_assets. */
extern const size_t adm_dashboard_nassets;

/*
 * adm_dashboard - GET/HEAD /dashboard (@rest "" or "/": index.html) and
 * /dashboard/NAME (@rest "/NAME"): the file with its type, a Content-
 * Security-Policy allowing only the page's own origin, and Cache-Control;
 * 404 for an unknown name, 405 (Allow: GET, HEAD) when !@get. Needs no
 * control plane; thread-safe (the table is read-only).
 * Returns 0 with @r set, or -ENOMEM.
 */
int adm_dashboard(const char *rest, bool get, struct sk_admin_reply *r);

#endif /* SK_ADMIN_IMPL_H */
