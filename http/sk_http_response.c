/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sk_http_response.c - HTTP/1.1 response writer and the prebuilt ("canned")
 * responses for the statuses a flash sale sends by the million.
 *
 * Every response is application/json with an exact Content-Length, so the
 * client never has to wait for the connection to close to find the end.
 * The canned responses are compile-time string constants laid out exactly as
 * sk_http_response_write() would write them (the unit tests check this byte
 * for byte), in three connection flavours each.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "sk_common.h"
#include "sk_http.h"

/* ------------------------------------------------------------------------ */
/* Reason phrases                                                            */
/* ------------------------------------------------------------------------ */

/* reason - the RFC 9110 reason phrase of @status, "" when not listed. */
static const char *
reason(unsigned status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 202:
		return "Accepted";
	case 308:
		return "Permanent Redirect";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 410:
		return "Gone";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 414:
		return "URI Too Long";
	case 415:
		return "Unsupported Media Type";
	case 417:
		return "Expectation Failed";
	case 425:
		return "Too Early";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "";
	}
}

/* ------------------------------------------------------------------------ */
/* Writer                                                                    */
/* ------------------------------------------------------------------------ */

/* Bounded appender: the writer stops at the first piece that does not fit. */
struct out {
	char *p;
	size_t n, cap;
	bool full;
};

static inline void
put(struct out *o, const void *s, size_t len)
{
	if (o->full || len > o->cap - o->n) {
		o->full = true;
		return;
	}
	memcpy(o->p + o->n, s, len);
	o->n += len;
}

#define PUT_LIT(o, lit) put((o), (lit), sizeof(lit) - 1)

/* put_u64 - decimal @v without leading zeros. */
static void
put_u64(struct out *o, uint64_t v)
{
	char tmp[SK_U64_DEC_MAX];

	put(o, tmp, sk_u64_dec(tmp, v));
}

static const char *const conn_line[SK_HTTP_CONN_MAX] = {
	[SK_HTTP_CONN_KEEP_ALIVE] = "",
	[SK_HTTP_CONN_CLOSE] = "Connection: close\r\n",
	[SK_HTTP_CONN_KEEP_ALIVE_10] = "Connection: keep-alive\r\n",
};

int
sk_http_response_write(void *buf, size_t cap, const struct sk_http_response *r)
{
	struct out o = {.p = buf, .n = 0, .cap = cap < INT_MAX ? cap : INT_MAX, .full = false};
	const char *why;
	char code[3];

	/* 1xx, 204 and 304 carry no content: they are not JSON responses */
	if (r->status < 200 || r->status > 599 || r->status == 204 || r->status == 304 ||
	    r->conn >= SK_HTTP_CONN_MAX)
		return -EINVAL;
	code[0] = (char)('0' + r->status / 100);
	code[1] = (char)('0' + r->status / 10 % 10);
	code[2] = (char)('0' + r->status % 10);
	why = reason(r->status);

	PUT_LIT(&o, "HTTP/1.1 ");
	put(&o, code, sizeof(code));
	PUT_LIT(&o, " ");
	put(&o, why, strlen(why));
	PUT_LIT(&o, "\r\n");
	if (r->date != NULL) {
		PUT_LIT(&o, "Date: ");
		put(&o, r->date, strnlen(r->date, SK_HTTP_DATE_SIZE - 1));
		PUT_LIT(&o, "\r\n");
	}
	PUT_LIT(&o, "Content-Type: application/json\r\nContent-Length: ");
	put_u64(&o, r->body_len);
	PUT_LIT(&o, "\r\n");
	put(&o, conn_line[r->conn], strlen(conn_line[r->conn]));
	if (r->retry_after != 0) {
		PUT_LIT(&o, "Retry-After: ");
		put_u64(&o, r->retry_after);
		PUT_LIT(&o, "\r\n");
	}
	if (r->extra_len != 0)
		put(&o, r->extra, r->extra_len);
	PUT_LIT(&o, "\r\n");
	if (!r->no_body && r->body_len != 0)
		put(&o, r->body, r->body_len);
	if (o.full)
		return -ENOSPC;
	return (int)o.n;
}

int
sk_http_date_format(char out[SK_HTTP_DATE_SIZE], time_t t)
{
	static const char wday[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
	static const char mon[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
					"Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || tm.tm_year + 1900 < 0 || tm.tm_year + 1900 > 9999)
		return -EINVAL;
	/* not strftime(): %a and %b follow the locale, the field must not */
	memcpy(out, wday[tm.tm_wday], 3);
	out[3] = ',';
	out[4] = ' ';
	out[5] = (char)('0' + tm.tm_mday / 10);
	out[6] = (char)('0' + tm.tm_mday % 10);
	out[7] = ' ';
	memcpy(out + 8, mon[tm.tm_mon], 3);
	out[11] = ' ';
	int y = tm.tm_year + 1900;
	out[12] = (char)('0' + y / 1000);
	out[13] = (char)('0' + y / 100 % 10);
	out[14] = (char)('0' + y / 10 % 10);
	out[15] = (char)('0' + y % 10);
	out[16] = ' ';
	out[17] = (char)('0' + tm.tm_hour / 10);
	out[18] = (char)('0' + tm.tm_hour % 10);
	out[19] = ':';
	out[20] = (char)('0' + tm.tm_min / 10);
	out[21] = (char)('0' + tm.tm_min % 10);
	out[22] = ':';
	/* tm_sec may be 60 on a leap second; that is what the field allows */
	out[23] = (char)('0' + tm.tm_sec / 10);
	out[24] = (char)('0' + tm.tm_sec % 10);
	memcpy(out + 25, " GMT", 5);
	return 29;
}

/* ------------------------------------------------------------------------ */
/* Canned responses                                                          */
/* ------------------------------------------------------------------------ */

/*
 * CANNED_HEAD - a response head as the writer lays it out (no Date): the
 * status line, Content-Type, Content-Length (@clen, a string literal that
 * must equal the body length: the tests check it), @conn, @extra.
 */
#define CANNED_HEAD(status_line, clen, conn, extra)                                                \
	"HTTP/1.1 " status_line "\r\n"                                                             \
	"Content-Type: application/json\r\n"                                                       \
	"Content-Length: " clen "\r\n" conn extra "\r\n"

#define CANNED_ONE(status_line, clen, conn, extra, body)                                           \
	{                                                                                          \
		.data = CANNED_HEAD(status_line, clen, conn, extra) body,                          \
		.len = sizeof(CANNED_HEAD(status_line, clen, conn, extra) body) - 1,               \
		.head_len = sizeof(CANNED_HEAD(status_line, clen, conn, extra)) - 1,               \
	}

#define CANNED(status_line, clen, extra, body)                                                     \
	{                                                                                          \
		[SK_HTTP_CONN_KEEP_ALIVE] = CANNED_ONE(status_line, clen, "", extra, body),        \
		[SK_HTTP_CONN_CLOSE] =                                                             \
			CANNED_ONE(status_line, clen, "Connection: close\r\n", extra, body),       \
		[SK_HTTP_CONN_KEEP_ALIVE_10] =                                                     \
			CANNED_ONE(status_line, clen, "Connection: keep-alive\r\n", extra, body),  \
	}

static const struct sk_http_canned canned[SK_HTTP_CANNED_MAX][SK_HTTP_CONN_MAX] = {
	[SK_HTTP_CANNED_HEALTHZ] = CANNED("200 OK", "15", "", "{\"status\":\"ok\"}"),
	[SK_HTTP_CANNED_BAD_REQUEST] =
		CANNED("400 Bad Request", "24", "", "{\"status\":\"bad_request\"}"),
	[SK_HTTP_CANNED_UNAUTHORIZED] =
		CANNED("401 Unauthorized", "25", "WWW-Authenticate: Bearer\r\n",
		       "{\"status\":\"unauthorized\"}"),
	[SK_HTTP_CANNED_ENDED] = CANNED("403 Forbidden", "18", "", "{\"status\":\"ended\"}"),
	[SK_HTTP_CANNED_NOT_FOUND] =
		CANNED("404 Not Found", "22", "", "{\"status\":\"not_found\"}"),
	[SK_HTTP_CANNED_METHOD] =
		CANNED("405 Method Not Allowed", "31", "Allow: GET, HEAD, POST\r\n",
		       "{\"status\":\"method_not_allowed\"}"),
	[SK_HTTP_CANNED_LIMIT] = CANNED("409 Conflict", "18", "", "{\"status\":\"limit\"}"),
	[SK_HTTP_CANNED_SOLD_OUT] = CANNED("410 Gone", "21", "", "{\"status\":\"sold_out\"}"),
	[SK_HTTP_CANNED_LENGTH_REQUIRED] =
		CANNED("411 Length Required", "28", "", "{\"status\":\"length_required\"}"),
	[SK_HTTP_CANNED_BODY_TOO_LARGE] =
		CANNED("413 Content Too Large", "27", "", "{\"status\":\"body_too_large\"}"),
	[SK_HTTP_CANNED_URI_TOO_LONG] =
		CANNED("414 URI Too Long", "25", "", "{\"status\":\"uri_too_long\"}"),
	[SK_HTTP_CANNED_BUSY] = CANNED("429 Too Many Requests", "17", "Retry-After: 1\r\n",
				       "{\"status\":\"busy\"}"),
	[SK_HTTP_CANNED_HEAD_TOO_LARGE] = CANNED("431 Request Header Fields Too Large", "29", "",
						 "{\"status\":\"header_too_large\"}"),
	[SK_HTTP_CANNED_NOT_IMPLEMENTED] =
		CANNED("501 Not Implemented", "28", "", "{\"status\":\"not_implemented\"}"),
	[SK_HTTP_CANNED_VERSION] = CANNED("505 HTTP Version Not Supported", "34", "",
					  "{\"status\":\"version_not_supported\"}"),
};

const struct sk_http_canned *
sk_http_canned_get(enum sk_http_canned_id id, enum sk_http_conn conn)
{
	if ((unsigned)id >= SK_HTTP_CANNED_MAX || (unsigned)conn >= SK_HTTP_CONN_MAX)
		return NULL;
	return &canned[id][conn];
}

const struct sk_http_canned *
sk_http_canned_error(enum sk_http_result r)
{
	enum sk_http_canned_id id;

	switch (r) {
	case SK_HTTP_E_REQUEST_LINE:
	case SK_HTTP_E_TARGET:
	case SK_HTTP_E_HEADER:
	case SK_HTTP_E_FRAMING:
	case SK_HTTP_E_HOST:
	case SK_HTTP_E_DUPLICATE:
		id = SK_HTTP_CANNED_BAD_REQUEST;
		break;
	case SK_HTTP_E_METHOD:
		id = SK_HTTP_CANNED_METHOD;
		break;
	case SK_HTTP_E_LENGTH_REQUIRED:
		id = SK_HTTP_CANNED_LENGTH_REQUIRED;
		break;
	case SK_HTTP_E_BODY_TOO_LARGE:
		id = SK_HTTP_CANNED_BODY_TOO_LARGE;
		break;
	case SK_HTTP_E_TARGET_TOO_LONG:
		id = SK_HTTP_CANNED_URI_TOO_LONG;
		break;
	case SK_HTTP_E_HEAD_TOO_LARGE:
		id = SK_HTTP_CANNED_HEAD_TOO_LARGE;
		break;
	case SK_HTTP_E_METHOD_UNKNOWN:
		id = SK_HTTP_CANNED_NOT_IMPLEMENTED;
		break;
	case SK_HTTP_E_VERSION:
		id = SK_HTTP_CANNED_VERSION;
		break;
	default:
		return NULL;
	}
	return &canned[id][SK_HTTP_CONN_CLOSE];
}
