/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The archive files (sk_store_archive.h): one order line per JSON line, in
 * order id order, written once and then only read. This file writes a
 * line, reads one back, and answers the reads: an order by id (a binary
 * search over the mapped file) and the listing of an archived item.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sk_addr.h"
#include "sk_store_archive.h"
#include "sk_store_impl.h"

/*
 * The fields of a line, in the order archive_line_write() writes them;
 * LINE_HEAD_SCAN reads them back up to the client's opening quote.
 */
#define LINE_HEAD_SCAN                                                                             \
	"{\"id\":%" SCNu64 ",\"line\":%u,\"nlines\":%u,\"item\":%" SCNu32 ",\"user\":%" SCNu64     \
	",\"qty\":%u,\"price\":%" SCNu64 ",\"time_ns\":%" SCNd64 ",\"returned\":%" SCNu32          \
	",\"refunded\":%u,\"state\":\"%15[a-z]\",\"deadline_ns\":%" SCNd64                         \
	",\"stored_ns\":%" SCNd64 ",\"updated_ns\":%" SCNd64 ",\"client\":\"%n"

/* put_str - the NUL-terminated @s at @p; the end. */
static char *
put_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* put_u64 - @v in decimal at @p; the end. (fprintf() per field costs a
 * million orders more than a second.) */
static char *
put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

static char *
put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

int
archive_line_write(FILE *f, const struct sk_store_line *l)
{
	char buf[512], client[SK_ADDR_STRLEN] = "", *p = buf;

	if (l->rec.client.family != SK_ADDR_NONE &&
	    sk_addr_format(&l->rec.client, client, sizeof(client)) < 0)
		client[0] = '\0';
	p = put_u64(put_str(p, "{\"id\":"), l->rec.id);
	p = put_u64(put_str(p, ",\"line\":"), l->rec.line);
	p = put_u64(put_str(p, ",\"nlines\":"), l->rec.nlines);
	p = put_u64(put_str(p, ",\"item\":"), l->rec.item);
	p = put_u64(put_str(p, ",\"user\":"), l->rec.user);
	p = put_u64(put_str(p, ",\"qty\":"), l->rec.qty);
	p = put_u64(put_str(p, ",\"price\":"), l->rec.price);
	p = put_i64(put_str(p, ",\"time_ns\":"), l->rec.time_ns);
	p = put_u64(put_str(p, ",\"returned\":"), l->rec.returned);
	p = put_u64(put_str(p, ",\"refunded\":"), l->refunded);
	p = put_str(put_str(p, ",\"state\":\""), sk_order_status_name(l->state));
	p = put_i64(put_str(p, "\",\"deadline_ns\":"), l->deadline_ns);
	p = put_i64(put_str(p, ",\"stored_ns\":"), l->stored_ns);
	p = put_i64(put_str(p, ",\"updated_ns\":"), l->updated_ns);
	p = put_str(put_str(put_str(p, ",\"client\":\""), client), "\"}\n");
	return fwrite(buf, 1, (size_t)(p - buf), f) == (size_t)(p - buf) ? 0 : -EIO;
}

/* state_of - the enum sk_order_status named @name; 0 if none. */
static unsigned
state_of(const char *name)
{
	static const unsigned states[] = {SK_ORDER_CONFIRMED, SK_ORDER_PAID, SK_ORDER_CANCELLED,
					  SK_ORDER_REFUNDED};

	for (size_t i = 0; i < SK_ARRAY_SIZE(states); i++)
		if (strcmp(sk_order_status_name(states[i]), name) == 0)
			return states[i];
	return 0;
}

/*
 * line_read - the order line at @p (up to @end, one line) into @l: 0, or
 * -EIO when it is not a line archive_line_write() wrote.
 */
static int
line_read(const char *p, const char *end, struct sk_store_line *l)
{
	char buf[512], state[16];
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	size_t len = (size_t)((nl != NULL ? nl : end) - p);
	unsigned line, nlines, qty, refunded;
	int off = -1;

	if (len == 0 || len >= sizeof(buf))
		return -EIO;
	memcpy(buf, p, len);
	buf[len] = '\0';
	memset(l, 0, sizeof(*l));
	if (sscanf(buf, LINE_HEAD_SCAN, &l->rec.id, &line, &nlines, &l->rec.item, &l->rec.user,
		   &qty, &l->rec.price, &l->rec.time_ns, &l->rec.returned, &refunded, state,
		   &l->deadline_ns, &l->stored_ns, &l->updated_ns, &off) != 14 ||
	    off < 0 || line > 255 || nlines > 255 || qty > UINT16_MAX || refunded > UINT16_MAX)
		return -EIO;
	l->rec.line = (uint8_t)line;
	l->rec.nlines = (uint8_t)nlines;
	l->rec.qty = (uint16_t)qty;
	l->refunded = (uint16_t)refunded;
	l->state = (uint8_t)state_of(state);
	const char *c = buf + off, *q = strchr(c, '"');
	if (l->state == 0 || q == NULL || strcmp(q, "\"}") != 0)
		return -EIO;
	if (q > c && sk_addr_parse(c, (size_t)(q - c), &l->rec.client) != SK_ADDR_OK)
		return -EIO;
	return 0;
}

/* A mapped archive file. */
struct afile {
	const char *p;
	size_t size;
};

static int
afile_open(struct sk_store *st, uint32_t item, struct afile *f)
{
	char path[4096];
	struct stat sb;
	int rc = sk_store_archive_path(st, item, path, sizeof(path));

	f->p = NULL;
	f->size = 0;
	if (rc != 0)
		return rc;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -EIO : -errno; /* recorded, so it must exist */
	if (fstat(fd, &sb) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	f->size = (size_t)sb.st_size;
	if (f->size > 0) {
		void *m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED)
			rc = -errno;
		else
			f->p = m;
	}
	close(fd);
	return rc;
}

static void
afile_close(struct afile *f)
{
	if (f->p != NULL)
		munmap((void *)f->p, f->size);
	f->p = NULL;
}

/* line_start - the first byte of the line that holds offset @off. */
static size_t
line_start(const struct afile *f, size_t off)
{
	while (off > 0 && f->p[off - 1] != '\n')
		off--;
	return off;
}

/* line_next - the offset after the line that starts at @off. */
static size_t
line_next(const struct afile *f, size_t off)
{
	const char *nl = memchr(f->p + off, '\n', f->size - off);

	return nl != NULL ? (size_t)(nl - f->p) + 1 : f->size;
}

/*
 * seek_id - the offset of the first line whose id is >= @id (binary search:
 * the lines are in id order); *rc set to -EIO on a damaged line.
 */
static size_t
seek_id(const struct afile *f, uint64_t id, int *rc)
{
	size_t lo = 0, hi = f->size;

	*rc = 0;
	while (lo < hi) {
		struct sk_store_line l;
		size_t s = line_start(f, lo + (hi - lo) / 2);

		if (s < lo)
			s = lo; /* lo is always a line start */
		*rc = line_read(f->p + s, f->p + f->size, &l);
		if (*rc != 0)
			return f->size;
		if (l.rec.id < id)
			lo = line_next(f, s);
		else if (s == lo)
			return lo;
		else
			hi = s;
	}
	return lo;
}

struct find_ctx {
	struct sk_store *st;
	uint64_t id;
	struct sk_store_line *lines;
	unsigned max, *nlines;
	int rc;
};

static int
find_in(struct sk_store *st, const struct sk_store_archive_info *info, struct find_ctx *c)
{
	struct afile f;
	int rc;

	if (c->id < info->first_id || c->id > info->last_id)
		return 0;
	rc = afile_open(st, info->item, &f);
	if (rc != 0)
		return rc;
	size_t off = f.p != NULL ? seek_id(&f, c->id, &rc) : 0;
	unsigned n = 0;
	while (rc == 0 && off < f.size) {
		struct sk_store_line l;

		rc = line_read(f.p + off, f.p + f.size, &l);
		if (rc != 0 || l.rec.id != c->id)
			break;
		if (n < c->max)
			c->lines[n] = l;
		n++;
		off = line_next(&f, off);
	}
	afile_close(&f);
	if (rc != 0)
		return rc;
	if (n == 0)
		return 0;
	*c->nlines = n;
	c->rc = n > c->max ? -ENOSPC : 0;
	return 1; /* found: stop */
}

static int
find_cb(const struct sk_store_archive_info *info, void *arg)
{
	struct find_ctx *c = arg;

	return find_in(c->st, info, c);
}

int
sk_store_archive_order_get(struct sk_store *st, uint64_t id, struct sk_store_line *lines,
			   unsigned max, unsigned *nlines)
{
	struct find_ctx c = {.st = st, .id = id, .lines = lines, .max = max, .nlines = nlines};

	if (id == 0 || nlines == NULL || (lines == NULL && max > 0))
		return -EINVAL;
	*nlines = 0;
	int rc = sk_store_archive_foreach(st, find_cb, &c);
	if (rc < 0)
		return rc;
	return rc == 1 ? c.rc : -ENOENT;
}

int
sk_store_archive_find(struct sk_store *st, const struct sk_store_order_query *q,
		      sk_store_order_cb cb, void *arg, bool *more)
{
	struct sk_store_archive_info info;
	struct afile f;
	uint32_t given = 0;
	int rc;

	if (more != NULL)
		*more = false;
	if (q == NULL || cb == NULL || q->limit == 0 || q->limit > SK_STORE_FIND_MAX)
		return -EINVAL;
	rc = sk_store_archive_get(st, q->item, &info);
	if (rc != 0)
		return rc;
	if (q->after == UINT64_MAX)
		return 0;
	rc = afile_open(st, q->item, &f);
	if (rc != 0)
		return rc;
	size_t off = f.p != NULL ? seek_id(&f, q->after + 1, &rc) : 0;
	while (rc == 0 && off < f.size) {
		struct sk_store_line l;

		rc = line_read(f.p + off, f.p + f.size, &l);
		off = line_next(&f, off);
		if (rc != 0 || (q->user != 0 && l.rec.user != q->user) ||
		    (q->state != 0 && l.state != q->state))
			continue;
		if (given == q->limit) {
			if (more != NULL)
				*more = true;
			break;
		}
		rc = cb(&l, 1, arg);
		given++;
	}
	afile_close(&f);
	return rc;
}
