/* machine.c — JSON machine files (tools/sim/README.md "Machine files"): a
 * small JSON reader (objects, arrays, numbers, strings, literals; depth at
 * most 16) and the checks of tools/sim/machines.py's check_machine, with its
 * messages, so that a file the simulator refuses is refused here too. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "machine.h"
#include "shiro_config.h"

#ifndef SHIRO_MACHINES_DATADIR
#define SHIRO_MACHINES_DATADIR ""
#endif
#ifndef SHIRO_MACHINES_SRCDIR
#define SHIRO_MACHINES_SRCDIR ""
#endif

enum { J_NULL,
       J_BOOL,
       J_NUM,
       J_STR,
       J_ARR,
       J_OBJ };
enum { J_MAX_DEPTH = 16,
       J_MAX_NODES = 4096 };

typedef struct jnode {
  int type;
  int isint; /* J_NUM written without fraction or exponent */
  double num; /* J_NUM, J_BOOL */
  char *key; /* member name inside an object (into the text, unescaped in place) */
  char *str; /* J_STR (likewise) */
  int child, next; /* first child, next sibling; -1 none */
} jnode;

typedef struct jparser {
  char *s; /* the text, NUL-terminated; strings are unescaped in place */
  size_t i;
  jnode *n; /* [J_MAX_NODES] */
  int nn;
  const char *path;
  shiro_error *err;
} jparser;

static int line_of(const jparser *p) {
  int line = 1;
  for (size_t k = 0; k < p->i; k++) line += p->s[k] == '\n'; /* strings were unescaped in place: NULs before i */
  return line;
}

static shiro_status jfail(jparser *p, const char *what) {
  return shiro_fail(p->err, SHIRO_ERR_PARSE, "%s:%d: not JSON: %s", p->path, line_of(p), what);
}

static void skip_ws(jparser *p) {
  while (p->s[p->i] == ' ' || p->s[p->i] == '\t' || p->s[p->i] == '\n' || p->s[p->i] == '\r') p->i++;
}

/* A string at p->i (the opening quote), unescaped in place; *out its start. */
static shiro_status parse_string(jparser *p, char **out) {
  char *w = p->s + ++p->i;
  *out = w;
  for (;;) {
    char c = p->s[p->i++];
    if (c == 0 || c == '\n') return jfail(p, "unterminated string");
    if (c == '"') break;
    if (c == '\\') {
      char e = p->s[p->i++];
      const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
      const char *at = e ? strchr(from, e) : NULL;
      if (at) c = to[at - from];
      else if (e == 'u') {
        for (int k = 0; k < 4; k++)
          if (!strchr("0123456789abcdefABCDEF", p->s[p->i + k]) || !p->s[p->i + k]) return jfail(p, "bad \\u escape");
        p->i += 4;
        c = '?'; /* names and descriptions only: a non-ASCII character is not interpreted */
      } else return jfail(p, "bad escape in a string");
    }
    *w++ = c;
  }
  *w = 0; /* w never passes the closing quote, so the text after it is intact */
  return SHIRO_OK;
}

static shiro_status parse_value(jparser *p, int depth, int *out);

/* The members or elements of an object or array, after its opening bracket. */
static shiro_status parse_children(jparser *p, int depth, int self, int obj) {
  int last = -1;
  skip_ws(p);
  if (p->s[p->i] == (obj ? '}' : ']')) {
    p->i++;
    return SHIRO_OK;
  }
  for (;;) {
    char *key = NULL;
    skip_ws(p);
    if (obj) {
      if (p->s[p->i] != '"') return jfail(p, "expected a member name");
      shiro_status st = parse_string(p, &key);
      if (st != SHIRO_OK) return st;
      skip_ws(p);
      if (p->s[p->i++] != ':') return jfail(p, "expected ':'");
    }
    int c;
    shiro_status st = parse_value(p, depth + 1, &c);
    if (st != SHIRO_OK) return st;
    p->n[c].key = key;
    if (last < 0) p->n[self].child = c;
    else p->n[last].next = c;
    last = c;
    skip_ws(p);
    char d = p->s[p->i++];
    if (d == (obj ? '}' : ']')) return SHIRO_OK;
    if (d != ',') return jfail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
  }
}

static shiro_status parse_value(jparser *p, int depth, int *out) {
  if (depth > J_MAX_DEPTH) return jfail(p, "nested too deep");
  if (p->nn >= J_MAX_NODES) return jfail(p, "too many values");
  int self = p->nn++;
  jnode *n = &p->n[self];
  memset(n, 0, sizeof *n);
  n->child = n->next = -1;
  *out = self;
  skip_ws(p);
  char c = p->s[p->i];
  if (c == '{' || c == '[') {
    p->i++;
    p->n[self].type = c == '{' ? J_OBJ : J_ARR;
    return parse_children(p, depth, self, c == '{');
  }
  if (c == '"') {
    n->type = J_STR;
    return parse_string(p, &n->str);
  }
  const char *lit[] = {"true", "false", "null"};
  for (int k = 0; k < 3; k++)
    if (!strncmp(p->s + p->i, lit[k], strlen(lit[k]))) {
      p->i += strlen(lit[k]);
      n->type = k == 2 ? J_NULL : J_BOOL;
      n->num = k == 0;
      return SHIRO_OK;
    }
  if (c == '-' || (c >= '0' && c <= '9')) {
    char *end;
    errno = 0;
    n->num = strtod(p->s + p->i, &end);
    if (errno || !isfinite(n->num)) return jfail(p, "number out of range");
    n->type = J_NUM;
    n->isint = !memchr(p->s + p->i, '.', (size_t)(end - (p->s + p->i))) &&
        !memchr(p->s + p->i, 'e', (size_t)(end - (p->s + p->i))) &&
        !memchr(p->s + p->i, 'E', (size_t)(end - (p->s + p->i)));
    p->i = (size_t)(end - p->s);
    return SHIRO_OK;
  }
  return jfail(p, c ? "expected a value" : "unexpected end of file");
}

/* The member `key` of object o, or -1. */
static int member(const jparser *p, int o, const char *key) {
  for (int c = p->n[o].child; c >= 0; c = p->n[c].next)
    if (!strcmp(p->n[c].key, key)) return c;
  return -1;
}

/* A short rendering of value v for messages ("found ..."). */
static void render(const jparser *p, int v, char *buf, size_t cap) {
  const jnode *n = &p->n[v];
  switch (n->type) {
    case J_NULL: snprintf(buf, cap, "null"); break;
    case J_BOOL: snprintf(buf, cap, "%s", n->num ? "true" : "false"); break;
    case J_NUM: snprintf(buf, cap, "%.17g", n->num); break;
    case J_STR: snprintf(buf, cap, "\"%.40s\"", n->str); break;
    case J_ARR: snprintf(buf, cap, "an array"); break;
    default: snprintf(buf, cap, "an object"); break;
  }
}

/* Checked field reading: where is the enclosing object's name ("" at the root). */
typedef struct checker {
  jparser *p;
  shiro_error *err;
} checker;

static shiro_status field_fail(const checker *k, const char *where, const char *key, const char *fmt, int v) {
  char found[80] = "";
  if (v >= 0) render(k->p, v, found, sizeof found);
  char msg[200];
  snprintf(msg, sizeof msg, fmt, found);
  return shiro_fail(k->err, SHIRO_ERR_PARSE, "%s: %s%s%s: %s", k->p->path, where, *where ? "." : "", key, msg);
}

/* obj.key as a number (positive: > 0, else >= 0; integer: written as one);
 * absent: *out = dflt, or an error if required. */
static shiro_status number(const checker *k, int obj, const char *where, const char *key, int required,
                           double dflt, int positive, int integer, double *out) {
  int v = obj >= 0 ? member(k->p, obj, key) : -1;
  if (v < 0) {
    if (required) return field_fail(k, where, key, "missing (required)%s", -1);
    *out = dflt;
    return SHIRO_OK;
  }
  const jnode *n = &k->p->n[v];
  if (n->type != J_NUM || (integer && !n->isint))
    return field_fail(k, where, key, integer ? "expected an integer, found %s" : "expected a number, found %s", v);
  if (positive && !(n->num > 0)) return field_fail(k, where, key, "expected a number > 0, found %s", v);
  if (!positive && n->num < 0) return field_fail(k, where, key, "expected a number >= 0, found %s", v);
  *out = n->num;
  return SHIRO_OK;
}

/* obj.key as an object (its node in *out, -1 if absent and not required). */
static shiro_status object(const checker *k, int obj, const char *where, const char *key, int required, int *out) {
  int v = member(k->p, obj, key);
  *out = v;
  if (v < 0) return required ? field_fail(k, where, key, "missing (required)%s", -1) : SHIRO_OK;
  if (k->p->n[v].type != J_OBJ) return field_fail(k, where, key, "expected an object, found %s", v);
  return SHIRO_OK;
}

/* Every member of obj is one of `known` (NULL-terminated). */
static shiro_status known_only(const checker *k, int obj, const char *where, const char *const *known) {
  for (int c = k->p->n[obj].child; c >= 0; c = k->p->n[c].next) {
    int ok = 0;
    for (int i = 0; known[i] && !ok; i++) ok = !strcmp(known[i], k->p->n[c].key);
    if (!ok) {
      char list[200] = "";
      for (int i = 0; known[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", known[i]);
      return shiro_fail(k->err, SHIRO_ERR_PARSE, "%s: %s%s%s: unknown field (expected some of %s)", k->p->path, where,
                        *where ? "." : "", k->p->n[c].key, list);
    }
  }
  return SHIRO_OK;
}

/* gpu: validated as machines.py does (the simulator's compute model; the
 * planner's model is communication only and reads none of it). */
static shiro_status check_gpu(const checker *k, int gpu) {
  static const char *const known[] = {"spmm_tflops", "hbm_TBps", "launch_us", NULL};
  double x;
  shiro_status st = known_only(k, gpu, "gpu", known);
  if (st == SHIRO_OK) st = number(k, gpu, "gpu", "hbm_TBps", 0, 1, 1, 0, &x);
  if (st == SHIRO_OK) st = number(k, gpu, "gpu", "launch_us", 0, 0, 0, 0, &x);
  int t = member(k->p, gpu, "spmm_tflops");
  if (st != SHIRO_OK || t < 0) return st;
  if (k->p->n[t].type != J_OBJ) return field_fail(k, "gpu", "spmm_tflops", "expected an object with float and double, found %s", t);
  for (int d = k->p->n[t].child; d >= 0; d = k->p->n[d].next) {
    char where[64];
    snprintf(where, sizeof where, "gpu.spmm_tflops.%.20s", k->p->n[d].key);
    if (k->p->n[d].type != J_OBJ || k->p->n[d].child < 0)
      return shiro_fail(k->err, SHIRO_ERR_PARSE, "%s: %s: expected an object of N: TFLOP/s", k->p->path, where);
    for (int e = k->p->n[d].child; e >= 0; e = k->p->n[e].next) {
      const char *key = k->p->n[e].key;
      if (key[0] < '1' || key[0] > '9' || strspn(key, "0123456789") != strlen(key))
        return shiro_fail(k->err, SHIRO_ERR_PARSE, "%s: %s: key \"%s\": expected N, a positive integer", k->p->path,
                          where, key);
      if ((st = number(k, d, where, key, 1, 0, 1, 0, &x)) != SHIRO_OK) return st;
    }
  }
  return SHIRO_OK;
}

/* A link object (nvlink, nic): bandwidth_GBps > 0, latency_us >= 0. */
static shiro_status check_link(const checker *k, int root, const char *name, double *Bps, double *lat_s) {
  static const char *const known[] = {"bandwidth_GBps", "latency_us", NULL};
  int o;
  double bw, lat;
  shiro_status st = object(k, root, "", name, 1, &o);
  if (st == SHIRO_OK) st = known_only(k, o, name, known);
  if (st == SHIRO_OK) st = number(k, o, name, "bandwidth_GBps", 1, 0, 1, 0, &bw);
  if (st == SHIRO_OK) st = number(k, o, name, "latency_us", 1, 0, 0, 0, &lat);
  if (st == SHIRO_OK) {
    *Bps = bw * 1e9;
    *lat_s = lat * 1e-6;
  }
  return st;
}

/* The root object's checks (check_machine), into *m. */
static shiro_status check_machine(const checker *k, int root, sc_machine *m) {
  static const char *const known[] = {"core", "description", "gpu", "gpus_per_node", "name", "network_model",
                                      "nic", "nics_per_node", "nvlink", NULL};
  jparser *p = k->p;
  if (p->n[root].type != J_OBJ) return shiro_fail(k->err, SHIRO_ERR_PARSE, "%s: expected a JSON object", p->path);
  shiro_status st = known_only(k, root, "", known);
  if (st != SHIRO_OK) return st;
  int name = member(p, root, "name"), desc = member(p, root, "description");
  if ((name >= 0 && p->n[name].type != J_STR) || (desc >= 0 && p->n[desc].type != J_STR))
    return shiro_fail(k->err, SHIRO_ERR_PARSE, "%s: name, description: expected strings", p->path);
  if (name >= 0) snprintf(m->name, sizeof m->name, "%s", p->n[name].str);
  double g, nics, core_lat = 0;
  if ((st = number(k, root, "", "gpus_per_node", 1, 0, 1, 1, &g)) != SHIRO_OK) return st;
  if (g > (1 << 20)) return field_fail(k, "", "gpus_per_node", "expected at most 1048576, found %s", member(p, root, "gpus_per_node"));
  if ((st = check_link(k, root, "nvlink", &m->nvlink_Bps, &m->nvlink_lat_s)) != SHIRO_OK) return st;
  if ((st = check_link(k, root, "nic", &m->nic_Bps, &m->nic_lat_s)) != SHIRO_OK) return st;
  if ((st = number(k, root, "", "nics_per_node", 0, g, 1, 1, &nics)) != SHIRO_OK) return st;
  if (nics > g)
    return shiro_fail(k->err, SHIRO_ERR_PARSE, "%s: nics_per_node: %.0f is more than gpus_per_node %.0f (each GPU uses one NIC)",
                      p->path, nics, g);
  int core, gpu;
  if ((st = object(k, root, "", "core", 0, &core)) != SHIRO_OK) return st;
  if (core >= 0) {
    static const char *const core_known[] = {"latency_us", NULL};
    if ((st = known_only(k, core, "core", core_known)) != SHIRO_OK) return st;
    if ((st = number(k, core, "core", "latency_us", 0, 0, 0, 0, &core_lat)) != SHIRO_OK) return st;
  }
  int model = member(p, root, "network_model");
  if (model >= 0 && (p->n[model].type != J_STR || (strcmp(p->n[model].str, "smpi") && strcmp(p->n[model].str, "ideal"))))
    return field_fail(k, "", "network_model", "expected one of smpi, ideal, found %s", model);
  if ((st = object(k, root, "", "gpu", 0, &gpu)) != SHIRO_OK) return st;
  if (gpu >= 0 && (st = check_gpu(k, gpu)) != SHIRO_OK) return st;
  m->gpus_per_node = (int32_t)g;
  m->nics_per_node = (int32_t)nics;
  m->core_lat_s = core_lat * 1e-6;
  m->ideal = model >= 0 && !strcmp(p->n[model].str, "ideal");
  return SHIRO_OK;
}

/* The whole file into a NUL-terminated buffer (*text, the caller frees). */
static shiro_status slurp(const char *path, char **text, shiro_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) return shiro_fail(err, SHIRO_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  shiro_status st = SHIRO_OK;
  while (buf) {
    n += fread(buf + n, 1, cap - 1 - n, f);
    if (n < cap - 1) break;
    if (cap >= (1u << 24)) {
      st = shiro_fail(err, SHIRO_ERR_PARSE, "%s: too large for a machine file (over 16 MiB)", path);
      break;
    }
    char *b = realloc(buf, cap *= 2);
    if (!b) {
      free(buf);
      buf = NULL;
    } else buf = b;
  }
  if (st == SHIRO_OK && !buf) st = shiro_fail(err, SHIRO_ERR_NOMEM, "%s: out of memory", path);
  if (st == SHIRO_OK && ferror(f)) st = shiro_fail(err, SHIRO_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
  if (st == SHIRO_OK && memchr(buf, 0, n)) st = shiro_fail(err, SHIRO_ERR_PARSE, "%s:1: not JSON: a NUL byte", path);
  fclose(f);
  if (st != SHIRO_OK) {
    free(buf);
    return st;
  }
  buf[n] = 0;
  *text = buf;
  return SHIRO_OK;
}

/* Reads and checks the machine file at path into *m. */
static shiro_status load_file(const char *path, sc_machine *m, shiro_error *err) {
  char *text = NULL;
  jnode *nodes = NULL;
  shiro_status st = slurp(path, &text, err);
  if (st != SHIRO_OK) return st;
  if (!(nodes = malloc(J_MAX_NODES * sizeof *nodes))) {
    free(text);
    return shiro_fail(err, SHIRO_ERR_NOMEM, "out of memory");
  }
  jparser p = {.s = text, .n = nodes, .path = path, .err = err};
  int root;
  sc_machine out;
  memset(&out, 0, sizeof out);
  SHIRO_CHECK_GOTO(parse_value(&p, 0, &root), st);
  skip_ws(&p);
  if (p.s[p.i]) {
    st = jfail(&p, "extra data after the value");
    goto done;
  }
  checker k = {&p, err};
  SHIRO_CHECK_GOTO(check_machine(&k, root, &out), st);
  if (!out.name[0]) { /* the file's stem */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strcspn(base, ".");
    snprintf(out.name, sizeof out.name, "%.*s", (int)(len ? len : strlen(base)), base);
  }
  snprintf(out.path, sizeof out.path, "%s", path);
  *m = out;
done:
  free(nodes);
  free(text);
  return st;
}

/* The machines folder: the installed one if it exists, else the source tree's. */
static const char *machines_dir(void) {
  struct stat sb;
  if (SHIRO_MACHINES_DATADIR[0] && stat(SHIRO_MACHINES_DATADIR, &sb) == 0 && S_ISDIR(sb.st_mode))
    return SHIRO_MACHINES_DATADIR;
  return SHIRO_MACHINES_SRCDIR;
}

/* Whether name can be a built-in machine's name (letters, digits, '-', '_', '.' not first). */
static int plain_name(const char *name) {
  return name[0] && name[0] != '.' && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == strlen(name) &&
      strlen(name) < 64;
}

void machine_builtin_names(char *buf, size_t cap) {
  buf[0] = 0;
  DIR *d = opendir(machines_dir());
  if (!d) return;
  char names[32][64];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 32;) {
    size_t l = strlen(e->d_name);
    if (l > 5 && l < 64 + 5 && !strcmp(e->d_name + l - 5, ".json")) snprintf(names[n++], 64, "%.*s", (int)(l - 5), e->d_name);
  }
  closedir(d);
  for (int i = 1; i < n; i++) /* sorted, as machines.py lists them */
    for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
      char t[64];
      memcpy(t, names[j], 64);
      memcpy(names[j], names[j - 1], 64);
      memcpy(names[j - 1], t, 64);
    }
  for (int i = 0; i < n; i++) snprintf(buf + strlen(buf), cap - strlen(buf), "%s%s", i ? ", " : "", names[i]);
}

shiro_status machine_load(const char *spec, sc_machine *m, shiro_error *err) {
  char path[1024];
  struct stat sb;
  if (plain_name(spec) && !strchr(spec, '/')) {
    snprintf(path, sizeof path, "%s/%s.json", machines_dir(), spec);
    if (stat(path, &sb) == 0) return load_file(path, m, err);
  }
  if (stat(spec, &sb) == 0) return load_file(spec, m, err);
  char names[512];
  machine_builtin_names(names, sizeof names);
  return shiro_fail(err, SHIRO_ERR_IO, "--machine %s: neither a built-in machine (%s) nor a machine file", spec,
                    names[0] ? names : "none found");
}
