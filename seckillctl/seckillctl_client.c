/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * seckillctl's client of the admin API (see seckillctl_client.h): the
 * HTTP/1.1 exchange through libcurl, the errors that say the daemon is
 * unreachable, and an answer's HTTP status as an exit code.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <curl/curl.h>
#include <jansson.h>

#include "sk_log.h"
#include "seckillctl.h"
#include "seckillctl_client.h"

#define MAX_RESPONSE   (64u << 20)
#define IO_TIMEOUT_S   10
#define RECONCILE_RUNS 3
#define TOKEN_MAX      512 /* SK_ADMIN_TOKEN_MAX of sk_admin.h */

/* ------------------------------------------------------------- HTTP client */

/* An answer of the admin API. */
struct resp {
	int status;		   /* HTTP status */
	char *body;		   /* malloc'd, NUL-terminated */
	size_t len;		   /* bytes of body, NUL not counted */
	size_t cap;		   /* bytes allocated at body */
	int err;		   /* why resp_write() refused: -EFBIG, -ENOMEM */
	char why[CURL_ERROR_SIZE]; /* libcurl's word for an error without an errno */
};

static void
resp_free(struct resp *r)
{
	free(r->body);
	r->body = NULL;
}

/* resp_write - libcurl's write callback: append to the body, MAX_RESPONSE at most. */
static size_t
resp_write(char *p, size_t size, size_t n, void *arg)
{
	struct resp *r = arg;

	n *= size; /* size is 1 */
	if (n > MAX_RESPONSE - r->len) {
		r->err = -EFBIG;
		return 0; /* anything but n fails the transfer */
	}
	if (r->len + n >= r->cap) {
		size_t cap = r->cap;
		while (cap <= r->len + n)
			cap *= 2;
		char *nb = realloc(r->body, cap);
		if (nb == NULL) {
			r->err = -ENOMEM;
			return 0;
		}
		r->body = nb;
		r->cap = cap;
	}
	memcpy(r->body + r->len, p, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

/*
 * curl_errno - the negative errno that stands for libcurl's @cc on @h, so
 * that the daemon being away reads as it always did ("Connection refused",
 * "No such file or directory"); -EPROTO for a malformed answer, -EIO with
 * r->why set for anything else.
 */
static int
curl_errno(CURL *h, CURLcode cc, struct resp *r, const char *errbuf)
{
	long os = 0;

	curl_easy_getinfo(h, CURLINFO_OS_ERRNO, &os);
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		return -ETIMEDOUT;
	case CURLE_COULDNT_CONNECT:
		return os > 0 ? -(int)os : -ECONNREFUSED;
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
		return os > 0 ? -(int)os : -EPROTO;
	case CURLE_WRITE_ERROR:
		return r->err != 0 ? r->err : -EIO;
	case CURLE_OUT_OF_MEMORY:
		return -ENOMEM;
	case CURLE_GOT_NOTHING:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_PARTIAL_FILE:
	case CURLE_BAD_CONTENT_ENCODING:
	case CURLE_UNSUPPORTED_PROTOCOL: /* an HTTP/0.9 answer */
		return -EPROTO;
	default:
		snprintf(r->why, sizeof(r->why), "%s",
			 errbuf[0] != '\0' ? errbuf : curl_easy_strerror(cc));
		return -EIO;
	}
}

/*
 * request - one HTTP/1.1 exchange with the admin API (libcurl, one handle a
 * request), only ever to 127.0.0.1:port or the unix socket. 0 with @r
 * filled (resp_free() it), else a negative errno as curl_errno() says, with
 * @r empty.
 */
static int
request(const struct ctl *c, const char *method, const char *path, const char *body,
	const char *ctype, struct resp *r)
{
	char url[128], errbuf[CURL_ERROR_SIZE] = "";
	bool post = strcmp(method, "POST") == 0;
	bool tcp = c->socket_path == NULL;
	struct curl_slist *hdr = NULL, *more;
	CURL *h = NULL;
	CURLcode cc;
	long status = 0;
	int rc = -ENOMEM;

	memset(r, 0, sizeof(*r));
	if (c->socket_path != NULL &&
	    strlen(c->socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return -ENAMETOOLONG;
	if (c->socket_path != NULL)
		snprintf(url, sizeof(url), "http://localhost%s", path);
	else
		snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", c->port, path);
	r->cap = 16384;
	r->body = malloc(r->cap);
	h = curl_easy_init();
	/* Every POST names its type, also without a body: the API refuses a
	 * POST without one (JSON; a list of ids is text/plain). */
	char ct[64];
	snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
	if (post && (hdr = curl_slist_append(NULL, ct)) == NULL)
		goto out;
	if (tcp && c->token != NULL) {
		char *auth = malloc(strlen(c->token) + 32);

		if (auth == NULL)
			goto out;
		sprintf(auth, "Authorization: Bearer %s", c->token);
		more = curl_slist_append(hdr, auth);
		memset(auth, 0, strlen(auth));
		free(auth);
		if (more == NULL)
			goto out;
		hdr = more;
	}
	if (r->body == NULL || h == NULL)
		goto out;
	r->body[0] = '\0';

	if ((cc = curl_easy_setopt(h, CURLOPT_URL, url)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http")) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_PROXY, "")) != CURLE_OK || /* not the env's */
	    (c->socket_path != NULL &&
	     (cc = curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket_path)) != CURLE_OK) ||
	    (cc = curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)IO_TIMEOUT_S)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)IO_TIMEOUT_S)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_USERAGENT, PROG)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, resp_write)) != CURLE_OK ||
	    (cc = curl_easy_setopt(h, CURLOPT_WRITEDATA, r)) != CURLE_OK ||
	    (hdr != NULL && (cc = curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr)) != CURLE_OK) ||
	    (post && (cc = curl_easy_setopt(h, CURLOPT_POSTFIELDS, body != NULL ? body : "")) !=
			     CURLE_OK)) {
		snprintf(r->why, sizeof(r->why), "libcurl: %s", curl_easy_strerror(cc));
		rc = -EIO;
		goto out;
	}
	cc = curl_easy_perform(h);
	if (cc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	rc = cc != CURLE_OK ? curl_errno(h, cc, r, errbuf) : status > 0 ? 0 : -EPROTO;
	r->status = (int)status;
out:
	curl_slist_free_all(hdr);
	curl_easy_cleanup(h);
	if (rc != 0)
		resp_free(r);
	return rc;
}

/* call - request + the common error handling; returns an exit code, EX_OK with @r set. */
static int
call(const struct ctl *c, const char *method, const char *path, const char *body, const char *ctype,
     struct resp *r)
{
	int rc = request(c, method, path, body, ctype, r);

	if (rc == -ECONNREFUSED || rc == -ENOENT || rc == -ETIMEDOUT || rc == -EHOSTUNREACH ||
	    rc == -ECONNRESET || rc == -EACCES || rc == -ENAMETOOLONG) {
		if (c->socket_path != NULL)
			sk_log(PROG, "cannot reach seckill-control at %s: %s", c->socket_path,
			       strerror(-rc));
		else
			sk_log(PROG, "cannot reach seckill-control at 127.0.0.1:%u: %s", c->port,
			       strerror(-rc));
		return EX_UNREACHABLE;
	}
	if (rc != 0) {
		sk_log(PROG, "%s %s: %s", method, path,
		       rc == -EPROTO ? "malformed HTTP response"
		       : r->why[0]   ? r->why
				     : strerror(-rc));
		return EX_ERR;
	}
	return EX_OK;
}

/* status_exit - the exit code for an HTTP status (after printing an error). */
static int
status_exit(const struct resp *r, const char *what)
{
	json_error_t e;
	json_t *j = json_loadb(r->body, r->len, 0, &e);
	const char *msg = j != NULL ? json_string_value(json_object_get(j, "error")) : NULL;
	const char *st = j != NULL ? json_string_value(json_object_get(j, "status")) : NULL;
	int ex = r->status == 404   ? EX_NOTFOUND
		 : r->status == 409 ? EX_CONFLICT
		 : r->status == 400 ? EX_USAGE
				    : EX_ERR;

	if (st != NULL && msg != NULL && r->status == 409)
		sk_log(PROG, "%s: %s (%s)", what, msg, st);
	else if (st != NULL && r->status == 409)
		sk_log(PROG, "%s: %s", what, st);
	else
		sk_log(PROG, "%s: %s (HTTP %d)", what, msg != NULL ? msg : "error", r->status);
	if (r->status == 401)
		sk_log(PROG,
		       "the admin API on TCP wants its bearer token: --token-file PATH or "
		       "%s=PATH (the file seckill-control's --admin-token-file reads), or "
		       "use the unix socket (--socket)",
		       CTL_TOKEN_FILE_ENV);
	json_decref(j);
	return ex;
}

int
ctl_load_token(struct ctl *c, const char *path)
{
	char buf[TOKEN_MAX + 3]; /* the token, "\r\n", one byte more: too long */
	size_t len = 0;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		sk_log(PROG, "--token-file %s: %s", path, strerror(errno));
		return EX_USAGE;
	}
	len = fread(buf, 1, sizeof(buf), f);
	bool err = ferror(f) != 0;
	fclose(f);
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	bool ok = !err && len >= 1 && len <= TOKEN_MAX;
	for (size_t i = 0; ok && i < len; i++)
		ok = buf[i] > ' ' && buf[i] < 0x7f;
	if (ok && (c->token = malloc(len + 1)) != NULL) {
		memcpy(c->token, buf, len);
		c->token[len] = '\0';
	}
	memset(buf, 0, sizeof(buf));
	if (!ok) {
		sk_log(PROG, "--token-file %s: %s", path,
		       err ? "read error" : "not one line of 1..512 visible characters");
		return EX_USAGE;
	}
	if (c->token == NULL) {
		sk_log(PROG, "out of memory");
		return EX_ERR;
	}
	return EX_OK;
}

/* api - one call of the admin API (see seckillctl_client.h). */
/* answer - what api() and api_text() do with answer @r (freed here). */
static int
answer(struct resp *r, const char *what, enum body_use use, json_t **out)
{
	int ex = EX_OK;
	bool ok = r->status == 200 || r->status == 201;
	if (use == BODY_PRINT_ALL || (use == BODY_PRINT && ok))
		fwrite(r->body, 1, r->len, stdout);
	if (!ok) {
		ex = status_exit(r, what);
	} else if (use == BODY_PARSE) {
		json_error_t e;
		*out = json_loadb(r->body, r->len, 0, &e);
		if (*out == NULL) {
			sk_log(PROG, "malformed JSON from the daemon: %s", e.text);
			ex = EX_ERR;
		}
	}
	resp_free(r);
	return ex;
}

int
api(const struct ctl *c, const char *method, const char *path, json_t *body, const char *what,
    enum body_use use, json_t **out)
{
	char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	struct resp r;
	int ex;

	json_decref(body);
	if (out != NULL)
		*out = NULL;
	if (body != NULL && text == NULL) {
		sk_log(PROG, "out of memory");
		return EX_ERR;
	}
	ex = call(c, method, path, text, "application/json", &r);
	free(text);
	if (ex != EX_OK)
		return ex;
	return answer(&r, what, use, out);
}

int
api_text(const struct ctl *c, const char *path, const char *text, const char *what,
	 enum body_use use, json_t **out)
{
	struct resp r;
	int ex;

	if (out != NULL)
		*out = NULL;
	ex = call(c, "POST", path, text, "text/plain", &r);
	if (ex != EX_OK)
		return ex;
	return answer(&r, what, use, out);
}

enum body_use
answer_use(const struct ctl *c)
{
	return c->json ? BODY_PRINT : BODY_PARSE;
}

struct target
target_of(const char *base, const char *id, const char *suffix, const char *kind)
{
	struct target t;

	snprintf(t.path, sizeof(t.path), "%s%s%s", base, id, suffix);
	snprintf(t.what, sizeof(t.what), "%s %s", kind, id);
	return t;
}
