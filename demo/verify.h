/* verify.h: the verify levels of the optics reader, and the validators
 * behind `check`.
 *
 *   off     the scanners alone (a lazy reader: fast, and trusting)
 *   json    the message must also be one well-formed JSON text: for the
 *           optics reader (vf_detail) checked in the same pass that finds
 *           the detail (jv_valid, valid.h); vf_check and `check` use
 *           js_validate, the reference, which names the error
 *   schema  it must also be what the full decoder accepts (tr_validate_Issue,
 *           generated from the decoder's own template): then the optics'
 *           verdict equals the decoder's on every input whatsoever
 *
 * A checker owns one scratch arena, allocated at creation and reset per
 * message: nothing is allocated per message. */
#ifndef TR_VERIFY_H
#define TR_VERIFY_H

#include <stdbool.h>

#include "tr_model.h"
#include "tr_optics.h"
#include "view.h"

typedef enum { VF_OFF, VF_JSON, VF_SCHEMA } vf_level;

bool vf_parse_level(const char *s, vf_level *out);
const char *vf_level_name(vf_level l);

typedef struct vf_checker vf_checker;

vf_checker *vf_new(void);
void vf_free(vf_checker *v);

/* TR_E_OK when m passes the level (always for VF_OFF). */
tr_error vf_check(vf_checker *v, vf_level level, tr_message m);

/* What the optics reader does with a message: true with *out its detail's
 * bytes when m passes the level and has a detail; false otherwise (a miss,
 * or a message the level rejects). off: the scanner alone; json: one pass
 * that validates and finds the detail; schema: the validator, which hands
 * back the detail's bytes as it passes them (tr_validate_Issue_views). */
bool vf_detail(vf_checker *v, vf_level level, tr_message m, tr_view_Detail *out);

#endif
