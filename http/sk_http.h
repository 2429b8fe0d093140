/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file
 * HTTP/1.1 layer of the dataplane: a resumable, zero-copy request parser and
 * a response writer with prebuilt ("canned") responses for the hot statuses.
 *
 * Parser model
 * ------------
 * The net stack hands the application all unconsumed in-order bytes of a
 * connection as one contiguous buffer, every time more bytes arrive. The
 * parser is built for exactly that: call sk_http_parse() with the buffer that
 * starts at the first byte of the request and the full length available so
 * far. It examines only bytes it has not seen yet (it stores its position as
 * an offset, never a pointer, so the buffer may move between calls), keeps
 * its state in a small struct sk_http_parser (<= 64 bytes, it fits in the
 * per-connection app area), allocates nothing and copies nothing.
 *
 * Typical use in an on_data() callback:
 *
 * @code
 *	size_t used = 0;
 *	for (;;) {
 *		struct sk_http_request req;
 *		enum sk_http_result r = sk_http_parse(&conn->http, data + used, len - used, &req);
 *		if (r == SK_HTTP_AGAIN)
 *			break;
 *		if (r == SK_HTTP_HEAD) {             // head complete, body still arriving
 *			if (req.expect_continue)
 *				send(SK_HTTP_100_CONTINUE);
 *			break;
 *		}
 *		if (sk_http_result_is_error(r)) {    // answer, then close the connection
 *			send(sk_http_canned_error(r)); close(); return len;
 *		}
 *		handle(&req);                        // SK_HTTP_DONE: answer in order
 *		used += req.len;                     // head + body of this request
 *		sk_http_parser_reset(&conn->http);   // ready for the next pipelined one
 *	}
 *	return used;
 * @endcode
 *
 * Once a request is DONE (or failed) the parser keeps that result: calling
 * sk_http_parse() again with the same bytes (possibly at another address)
 * returns the same result and refills @c req, which lets a "parked" request
 * recover its pointers after the net stack moved the buffer. Call
 * sk_http_parser_reset() after consuming the request.
 *
 * Protocol rules (RFC 9112 / RFC 9110) and the status each refusal maps to
 * are listed in docs/http.md; the short version is on enum sk_http_result.
 *
 * Thread-safety: a parser belongs to one connection, hence to one lcore; no
 * function here takes a lock, makes a syscall or allocates. The canned
 * responses are immutable and may be shared by every lcore.
 */
#ifndef SK_HTTP_H
#define SK_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Limits                                                                    */
/* ------------------------------------------------------------------------ */

/** Default size limit of the head (request line + fields + final CRLF). */
#define SK_HTTP_HEAD_MAX_DEFAULT 8192
/** Default limit of the request-target length (longer: 414). */
#define SK_HTTP_TARGET_MAX_DEFAULT 4096
/** Default limit of a request body (Content-Length above it: 413). */
#define SK_HTTP_BODY_MAX_DEFAULT 1024
/** Default limit of the number of header field lines (more: 431). */
#define SK_HTTP_FIELDS_MAX_DEFAULT 64
/** Largest accepted head_max: offsets are kept in 16 bits. */
#define SK_HTTP_HEAD_MAX_LIMIT 65535

/**
 * Parser limits. All-zero fields mean "default"; see sk_http_parser_init().
 */
struct sk_http_limits {
	uint32_t head_max;   /**< head bytes, 64..65535; exceeded: 431 */
	uint32_t target_max; /**< request-target bytes, 1..head_max-16; exceeded: 414 */
	uint32_t body_max;   /**< Content-Length limit, 1..(1<<30); exceeded: 413 */
	uint32_t fields_max; /**< header field lines, 1..1024; exceeded: 431 */
};

/* ------------------------------------------------------------------------ */
/* Parser results                                                            */
/* ------------------------------------------------------------------------ */

/**
 * What sk_http_parse() found. Every error result is final for the
 * connection: answer with the status of sk_http_result_status() (a canned
 * "Connection: close" response from sk_http_canned_error()) and close.
 */
enum sk_http_result {
	/** Head and body complete; the request is filled. */
	SK_HTTP_DONE = 0,
	/** Need more bytes; call again with a longer buffer. */
	SK_HTTP_AGAIN,
	/**
	 * Head complete and valid, body not complete yet; the request is
	 * filled (its body pointer is not valid yet). Returned once per
	 * request: the moment to send 100 Continue. Later calls return
	 * AGAIN, then DONE.
	 */
	SK_HTTP_HEAD,

	/** 400: bad method token, spacing, version syntax, bare CR. */
	SK_HTTP_E_REQUEST_LINE,
	/**
	 * 400: target neither origin-form nor http/https absolute-form;
	 * absolute-form with userinfo or no host; forbidden byte, bad %XX.
	 */
	SK_HTTP_E_TARGET,
	/**
	 * 400: bad byte in a field name or value, whitespace before the
	 * colon, missing colon, obs-fold (line starting with SP/HTAB), bare CR.
	 */
	SK_HTTP_E_HEADER,
	/**
	 * 400: invalid or duplicate Content-Length; Transfer-Encoding together
	 * with Content-Length, in HTTP/1.0, or not ending in "chunked".
	 */
	SK_HTTP_E_FRAMING,
	/** 400: HTTP/1.1 request without Host, or Host twice. */
	SK_HTTP_E_HOST,
	/** 400: Authorization, X-User-Id or Content-Type twice. */
	SK_HTTP_E_DUPLICATE,
	/**
	 * 405: a registered method that this appliance serves on no
	 * resource (PUT, DELETE, PATCH, OPTIONS, TRACE, CONNECT).
	 */
	SK_HTTP_E_METHOD,
	/** 411: chunked request body; the client must send Content-Length. */
	SK_HTTP_E_LENGTH_REQUIRED,
	/** 413: Content-Length above body_max. */
	SK_HTTP_E_BODY_TOO_LARGE,
	/** 414: request-target longer than target_max. */
	SK_HTTP_E_TARGET_TOO_LONG,
	/** 431: head longer than head_max, or more than fields_max field lines. */
	SK_HTTP_E_HEAD_TOO_LARGE,
	/** 501: method token not recognised. */
	SK_HTTP_E_METHOD_UNKNOWN,
	/** 505: HTTP major version other than 1. */
	SK_HTTP_E_VERSION,
	/** Number of results (not a result). */
	SK_HTTP_RESULT_MAX
};

/** First error result: every value from here on is an SK_HTTP_E_*. */
#define SK_HTTP_E_FIRST SK_HTTP_E_REQUEST_LINE

/** sk_http_result_is_error - true if @r is one of the SK_HTTP_E_* results. */
static inline bool
sk_http_result_is_error(enum sk_http_result r)
{
	return r >= SK_HTTP_E_FIRST;
}

/**
 * sk_http_result_status - the HTTP status code that answers result @r.
 * @return 400..505 for errors, 200 for DONE/HEAD/AGAIN (no error), 500 for an
 *   out-of-range value.
 */
int sk_http_result_status(enum sk_http_result r);

/**
 * sk_http_result_name - short stable name of @r for counters and logs
 * ("done", "again", "head", "bad_request_line", "bad_target", ...).
 * @return a static string; "unknown" for an out-of-range value.
 */
const char *sk_http_result_name(enum sk_http_result r);

/* ------------------------------------------------------------------------ */
/* Requests                                                                  */
/* ------------------------------------------------------------------------ */

/** Methods the parser accepts; every other method is refused (405/501). */
enum sk_http_method {
	SK_HTTP_METHOD_NONE = 0, /**< not parsed yet */
	SK_HTTP_METHOD_GET,
	SK_HTTP_METHOD_HEAD, /**< answer without body: see sk_http_canned::head_len */
	SK_HTTP_METHOD_POST,
};

/**
 * A parsed request. Every pointer points into the buffer given to the
 * sk_http_parse() call that filled it; it is valid only while those bytes
 * stay where they are (do not modify or free them; parse again after the
 * buffer moved). Absent fields: NULL pointer, length 0.
 */
struct sk_http_request {
	/**
	 * Path and query of the request-target, starts with '/': the target
	 * itself in origin-form; in absolute-form ("http://h/p?q") what follows
	 * the authority, "/" if that is empty or only a query (the query of
	 * "http://h?q" is then not exposed).
	 */
	const char *target;
	/**
	 * Host field value, OWS trimmed; for an absolute-form target its
	 * authority (host[:port]) instead (RFC 9112 3.2.2). NULL: HTTP/1.0
	 * origin-form request without Host.
	 */
	const char *host;
	const char *authorization; /**< Authorization value, OWS trimmed */
	const char *user_id;	   /**< X-User-Id value, OWS trimmed */
	const char *content_type;  /**< Content-Type value, OWS trimmed */
	const uint8_t *body;	   /**< body_len bytes after the head (DONE only) */
	uint32_t head_len;	   /**< bytes of the head, leading empty lines included */
	uint32_t body_len;	   /**< Content-Length (0 when absent) */
	uint32_t len;		   /**< head_len + body_len: bytes to consume on DONE */
	uint16_t target_len;	   /**< length of target */
	uint16_t path_len;	   /**< bytes of target before '?' (== target_len if none) */
	uint16_t host_len;
	uint16_t authorization_len;
	uint16_t user_id_len;
	uint16_t content_type_len;
	uint16_t nfields;	 /**< header field lines seen */
	uint8_t method;		 /**< enum sk_http_method */
	uint8_t version;	 /**< 10 for HTTP/1.0, 11 for HTTP/1.1 (and 1.2..1.9) */
	bool keep_alive;	 /**< false: send "Connection: close" and close */
	bool expect_continue;	 /**< HTTP/1.1 Expect: 100-continue; act on it on HEAD only
				      (on DONE the body is already here: no 100 needed) */
	bool has_content_length; /**< a Content-Length field was present */
	bool keep_alive_header;	 /**< HTTP/1.0 keep-alive: answer with
				      "Connection: keep-alive" (SK_HTTP_CONN_KEEP_ALIVE_10) */
};

/**
 * Parser state of one connection. Opaque in spirit: read nothing here,
 * initialise with sk_http_parser_init(). Holds offsets only, so it survives
 * the buffer moving between calls. Not a valid value when all-zero.
 */
struct sk_http_parser {
	uint32_t pos;	   /* next byte to examine (offset from request start) */
	uint32_t body_len; /* Content-Length */
	uint32_t body_max; /* limits, copied from sk_http_limits */
	uint16_t head_max;
	uint16_t target_max;
	uint16_t fields_max;
	uint16_t head_len;   /* set when the head is complete */
	uint16_t start;	     /* first byte of the request line (after empty lines) */
	uint16_t line;	     /* first byte of the current line */
	uint16_t colon;	     /* offset of ':' in the current field line */
	uint16_t target_raw; /* first byte of the request-target as sent */
	uint16_t target_off, target_len, path_len; /* path and query */
	uint16_t host_off, host_len;
	uint16_t auth_off, auth_len;
	uint16_t uid_off, uid_len;
	uint16_t ctype_off, ctype_len;
	uint16_t nfields;
	uint16_t flags;	 /* SK_HTTP_F_* (private) */
	uint8_t state;	 /* private state machine position */
	uint8_t result;	 /* sticky final result (DONE or error) */
	uint8_t method;	 /* enum sk_http_method */
	uint8_t version; /* 10 or 11 once the request line is parsed */
	uint8_t pct;	 /* hex digits still expected after '%' in the target */
	uint8_t pad[1];
};

/* The net stack guarantees at least 128 bytes of app area per connection. */
_Static_assert(sizeof(struct sk_http_parser) <= 64, "sk_http_parser must stay one cache line");

/**
 * sk_http_parser_init - set up @p for the first request of a connection.
 * @param[out] p       parser state (in the connection's app area)
 * @param[in]  limits  limits to enforce, copied; NULL or zero fields: defaults
 * @return 0 on success, or
 *   -EINVAL if a limit is out of its documented range (@p is then set up
 *           with the defaults, so it is still usable).
 */
int sk_http_parser_init(struct sk_http_parser *p, const struct sk_http_limits *limits);

/**
 * sk_http_parser_reset - forget the current request, keep the limits. Call
 * it after consuming a DONE request's req.len bytes, before parsing the next.
 * @param[in,out] p  an initialised parser
 */
void sk_http_parser_reset(struct sk_http_parser *p);

/**
 * sk_http_parse - continue parsing the request that starts at @buf.
 *
 * @buf must start at the first byte of the request (the first unconsumed
 * byte of the connection) and hold every byte received since, @len being
 * at least the length of the previous call for the same request. Only the
 * bytes at and beyond the stored position are examined; earlier bytes are
 * re-read only to fill @req. Bytes past the request (a pipelined next
 * request) are never examined.
 *
 * Cost: O(new bytes) per call, plus O(line) once per interesting field line;
 * nothing is allocated or copied.
 *
 * @param[in,out] p    parser state
 * @param[in]     buf  start of the request; may differ between calls
 * @param[in]     len  bytes available at @buf
 * @param[out]    req  filled on SK_HTTP_DONE and SK_HTTP_HEAD (pointers into
 *                     @buf); untouched otherwise. May be NULL.
 * @return
 *   - SK_HTTP_DONE: complete; consume req->len bytes, then reset the parser.
 *   - SK_HTTP_HEAD: head complete, body pending (returned once).
 *   - SK_HTTP_AGAIN: need more bytes.
 *   - SK_HTTP_E_*: malformed or refused request (see enum sk_http_result);
 *     answer with sk_http_result_status() and close the connection.
 */
enum sk_http_result sk_http_parse(struct sk_http_parser *p, const void *buf, size_t len,
				  struct sk_http_request *req);

/* ------------------------------------------------------------------------ */
/* Responses                                                                 */
/* ------------------------------------------------------------------------ */

/** The interim response sent on SK_HTTP_HEAD when req.expect_continue. */
#define SK_HTTP_100_CONTINUE	 "HTTP/1.1 100 Continue\r\n\r\n"
#define SK_HTTP_100_CONTINUE_LEN (sizeof(SK_HTTP_100_CONTINUE) - 1)

/** How a response talks about the connection. */
enum sk_http_conn {
	SK_HTTP_CONN_KEEP_ALIVE = 0, /**< no Connection field (HTTP/1.1 default) */
	SK_HTTP_CONN_CLOSE,	     /**< "Connection: close"; close after sending */
	SK_HTTP_CONN_KEEP_ALIVE_10,  /**< "Connection: keep-alive" (HTTP/1.0 client
					  that asked for it) */
	SK_HTTP_CONN_MAX
};

/** sk_http_request_conn - the enum sk_http_conn that answers @req. */
static inline enum sk_http_conn
sk_http_request_conn(const struct sk_http_request *req)
{
	if (!req->keep_alive)
		return SK_HTTP_CONN_CLOSE;
	return req->keep_alive_header ? SK_HTTP_CONN_KEEP_ALIVE_10 : SK_HTTP_CONN_KEEP_ALIVE;
}

/** What sk_http_response_write() writes. All-zero except status is valid. */
struct sk_http_response {
	uint16_t status;      /**< 200..599 but 204/304; reason phrase from a table */
	uint8_t conn;	      /**< enum sk_http_conn */
	bool no_body;	      /**< HEAD request: Content-Length of body, no body */
	uint32_t retry_after; /**< seconds for Retry-After; 0: no field */
	const char *body;     /**< JSON body (Content-Type: application/json) */
	size_t body_len;      /**< bytes of body; 0 allowed */
	const char *extra;    /**< extra field lines, each ending "\r\n"; not checked */
	size_t extra_len;     /**< bytes of extra; 0: none */
	const char *date;     /**< IMF-fixdate from sk_http_date_format(); NULL: none */
};

/**
 * sk_http_response_write - write a complete response head and body into @buf:
 * status line (HTTP/1.1), [Date], Content-Type: application/json,
 * Content-Length, [Connection], [Retry-After], [extra], CRLF, body.
 * @param[out] buf  destination, not NUL-terminated
 * @param[in]  cap  bytes available at @buf
 * @param[in]  r    what to write; @r->body and @r->extra are copied
 * @return bytes written (> 0), or
 *   -ENOSPC if the response does not fit in @cap (@buf content undefined),
 *   -EINVAL if @r->status is not 200..599, is 204 or 304 (no content), or
 *           @r->conn is out of range.
 * Thread-safe (writes only @buf).
 */
int sk_http_response_write(void *buf, size_t cap, const struct sk_http_response *r);

/** Size of an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") plus NUL. */
#define SK_HTTP_DATE_SIZE 30

/**
 * sk_http_date_format - format @t as an IMF-fixdate for the Date field.
 * Meant to be called once a second per lcore, not per request.
 * @param[out] out  SK_HTTP_DATE_SIZE bytes, NUL-terminated on return
 * @param[in]  t    seconds since the epoch
 * @return 29 (characters written, NUL excluded), or -EINVAL if @t cannot be
 *   broken down.
 */
int sk_http_date_format(char out[SK_HTTP_DATE_SIZE], time_t t);

/** The prebuilt responses (JSON bodies of design §4). */
enum sk_http_canned_id {
	SK_HTTP_CANNED_HEALTHZ = 0,	/**< 200 {"status":"ok"} */
	SK_HTTP_CANNED_BAD_REQUEST,	/**< 400 {"status":"bad_request"} */
	SK_HTTP_CANNED_UNAUTHORIZED,	/**< 401 {"status":"unauthorized"} + WWW-Authenticate */
	SK_HTTP_CANNED_ENDED,		/**< 403 {"status":"ended"} */
	SK_HTTP_CANNED_NOT_FOUND,	/**< 404 {"status":"not_found"} */
	SK_HTTP_CANNED_METHOD,		/**< 405 {"status":"method_not_allowed"} + Allow */
	SK_HTTP_CANNED_LIMIT,		/**< 409 {"status":"limit"} */
	SK_HTTP_CANNED_SOLD_OUT,	/**< 410 {"status":"sold_out"} */
	SK_HTTP_CANNED_LENGTH_REQUIRED, /**< 411 {"status":"length_required"} */
	SK_HTTP_CANNED_BODY_TOO_LARGE,	/**< 413 {"status":"body_too_large"} */
	SK_HTTP_CANNED_URI_TOO_LONG,	/**< 414 {"status":"uri_too_long"} */
	SK_HTTP_CANNED_BUSY,		/**< 429 {"status":"busy"} + Retry-After: 1 */
	SK_HTTP_CANNED_HEAD_TOO_LARGE,	/**< 431 {"status":"header_too_large"} */
	SK_HTTP_CANNED_NOT_IMPLEMENTED, /**< 501 {"status":"not_implemented"} */
	SK_HTTP_CANNED_VERSION,		/**< 505 {"status":"version_not_supported"} */
	SK_HTTP_CANNED_MAX
};

/** One prebuilt response: immutable bytes, shared by every lcore. */
struct sk_http_canned {
	const char *data;  /**< full response, not NUL-terminated for sending */
	uint16_t len;	   /**< bytes of the full response */
	uint16_t head_len; /**< bytes of the head only: send these for HEAD */
};

/**
 * sk_http_canned_get - the prebuilt response @id with connection handling
 * @conn.
 * @return a pointer to static storage, or NULL if @id or @conn is out of
 *   range. Never freed; valid for the life of the process.
 */
const struct sk_http_canned *sk_http_canned_get(enum sk_http_canned_id id, enum sk_http_conn conn);

/**
 * sk_http_canned_error - the "Connection: close" canned response that
 * answers parser error @r (400 for the 400 family, 405, 411, 413, 414, 431,
 * 501, 505).
 * @return a pointer to static storage, or NULL if @r is not an error.
 */
const struct sk_http_canned *sk_http_canned_error(enum sk_http_result r);

#ifdef __cplusplus
}
#endif

#endif /* SK_HTTP_H */
