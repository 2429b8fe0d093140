/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's client of the admin API (sk_admin.h, docs/control.md "Admin
 * API"): one HTTP/1.1 exchange per call with 127.0.0.1:port (with
 * "Authorization: Bearer" when struct ctl has a token) or the unix socket
 * of struct ctl, through libcurl (curl_global_init() done by the
 * caller), never through a proxy. Errors are printed here and returned as
 * seckillctl's exit codes (seckillctl.h). Single-threaded.
 */
#ifndef SECKILLCTL_CLIENT_H
#define SECKILLCTL_CLIENT_H

#include <jansson.h>

#include "seckillctl.h"

/* What api() does with an answer's body. */
enum body_use {
	BODY_PARSE,	/* parse a 200/201 answer into *out */
	BODY_PRINT,	/* print a 200/201 answer as it came (--json, metrics) */
	BODY_PRINT_ALL, /* print every answer as it came, errors too */
};

/*
 * api - one call of the admin API: @method @path with the JSON @body
 * (consumed; NULL for none). A 200 or 201 answer is used as @use says
 * (*@out then owns the parsed JSON, NULL otherwise); any other status
 * prints an error naming @what. Every error is printed here (sk_log).
 * Returns EX_OK; EX_UNREACHABLE if the daemon cannot be reached (refused,
 * no socket, timeout, path too long); EX_NOTFOUND for 404, EX_CONFLICT for
 * 409, EX_USAGE for 400; EX_ERR for any other status, a malformed HTTP
 * answer or JSON, or no memory.
 */
int api(const struct ctl *c, const char *method, const char *path, json_t *body, const char *what,
	enum body_use use, json_t **out);

/*
 * api_text - api() for a POST of @text (NUL-terminated) as text/plain.
 */
int api_text(const struct ctl *c, const char *path, const char *text, const char *what,
	     enum body_use use, json_t **out);

/*
 * ctl_load_token - read the bearer token of TCP from the file at @path
 * into c->token (malloc'd; freed by the caller): one line of 1..512
 * visible ASCII characters. The file's mode is not checked here (the
 * server checks its own copy). Returns EX_OK, EX_USAGE (cannot read it, or
 * no token in it; printed, naming @path) or EX_ERR (no memory).
 */
int ctl_load_token(struct ctl *c, const char *path);

/* answer_use - what a command does with a good answer: print it (--json) or parse it. */
enum body_use answer_use(const struct ctl *c);

/* One object of the API: where it is and how errors name it. */
struct target {
	char path[96]; /* "/v1/orders/42/pay" */
	char what[64]; /* "order 42" */
};

/* target_of - path @base @id @suffix ("/v1/orders/", "42", "/pay"), name "@kind @id". */
struct target target_of(const char *base, const char *id, const char *suffix, const char *kind);

#endif /* SECKILLCTL_CLIENT_H */
