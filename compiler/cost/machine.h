/* machine.h — the machine a plan's time is predicted for: the same JSON
 * machine files tools/sim/simulate.sh turns into SimGrid platforms
 * (tools/sim/machines/NAME.json, tools/sim/README.md "Machine files"), read
 * and checked here with the same rules and messages as tools/sim/machines.py. */
#ifndef SHIRO_MACHINE_H
#define SHIRO_MACHINE_H

#include <stdint.h>

#include "shiro_status.h"

typedef struct sc_machine {
  char name[64]; /* "name", or the file's stem */
  char path[512]; /* the file read */
  int32_t gpus_per_node; /* GPUs of a node: rank r is in node r / gpus_per_node */
  int32_t nics_per_node; /* NICs of a node; GPU i of a node uses NIC i mod nics_per_node */
  double nvlink_Bps; /* a GPU's NVLink port, each direction: bytes/s (10^9 per GB/s) */
  double nvlink_lat_s; /* its latency, seconds */
  double nic_Bps; /* a NIC, each direction */
  double nic_lat_s;
  double core_lat_s; /* the core network's latency (non-blocking: no bandwidth limit) */
  int ideal; /* network_model "ideal": no SMPI factors (links only); 0: "smpi" */
} sc_machine;

/* Loads machine `spec`: a built-in machine's name (a file NAME.json in the
 * installed machines folder, or else in the source tree's tools/sim/machines)
 * or a path to a JSON machine file. Fails with SHIRO_ERR_IO (cannot read, or
 * neither a built-in name nor a file) or SHIRO_ERR_PARSE (not JSON, or a
 * field missing, of the wrong type, out of range or unknown), the message
 * naming the file and the field ("FILE: nic.bandwidth_GBps: expected a
 * number > 0, found 0"). *m is written only on success. */
shiro_status machine_load(const char *spec, sc_machine *m, shiro_error *err);

/* The built-in machines' names, comma-separated, into buf (for messages and --help). */
void machine_builtin_names(char *buf, size_t cap);

#endif
