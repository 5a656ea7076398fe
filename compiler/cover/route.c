/* route.c — hybrid's routing table (sc_route, strategy.h): the lookups plan/ reads it
 * with, its links set before hybrid runs, and its tables dropped. A file of its own so
 * that blocks.c, which owns B->route, frees it without calling into hybrid.c. */
#include <stdlib.h>

#include "error.h"
#include "sorted.h"
#include "strategy.h"

int64_t route_pair(const sc_route *r, int32_t N, int32_t H) {
  int64_t key = (int64_t)N * r->nodes + H, lo = 0, hi = r->npairs;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (r->pair[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < r->npairs && r->pair[lo] == key ? lo : -1;
}

int route_direct(const sc_route *r, int32_t N, int32_t H) {
  int64_t y = N == H ? -1 : route_pair(r, N, H);
  return y >= 0 && r->direct[y] == ROUTE_DIRECT;
}

int32_t route_rep(const sc_route *r, int32_t q, int32_t N) {
  int32_t G = r->gpn, H = q / G;
  int64_t y = route_pair(r, N, H);
  return y >= 0 ? r->rep[y * G + (q - H * G)] : sc_rail(N, q, G, r->ranks);
}

int32_t route_agg(const sc_route *r, int32_t p, int32_t H) {
  int32_t G = r->gpn, N = p / G;
  int64_t y = route_pair(r, N, H);
  return y >= 0 ? r->agg[y * G + (p - N * G)] : sc_rail(H, p, G, r->ranks);
}

int route_all_direct(const sc_blocks *B, int32_t gpn) {
  const sc_route *rt = B->route;
  int32_t G = gpn < B->parts ? gpn : B->parts;
  if (!rt || !rt->direct || G < 1 || rt->gpn != G) return 0;
  for (int64_t y = 0; y < rt->npairs; y++)
    if (rt->direct[y] != ROUTE_DIRECT) return 0;
  return 1;
}

void route_drop_tables(sc_route *r) {
  free(r->pair);
  free(r->direct);
  free(r->rep);
  free(r->agg);
  r->pair = NULL;
  r->direct = NULL;
  r->rep = r->agg = NULL;
  r->npairs = 0;
  r->nodes = r->gpn = r->ranks = 0;
  r->pairs_direct = r->pairs_relayed = r->pairs_relayed_joint = r->relays_moved = 0;
  r->est_relayed_joint_s = 0;
  r->est_s = r->est_direct_s = r->est_relayed_s = r->price_s = 0;
  r->candidate = -1;
}

shiro_status strategy_route_links(sc_blocks *B, const sc_links *links, shiro_error *err) {
  if (!B->route && !(B->route = calloc(1, sizeof *B->route)))
    return shiro_fail(err, SHIRO_ERR_NOMEM, "hybrid: out of memory");
  B->route->links = *links;
  B->route->have_links = 1;
  return SHIRO_OK;
}
