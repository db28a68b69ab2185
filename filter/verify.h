/* verify.h: the verify levels of the optics reader, and the validators
 * behind `check`.
 *
 *   off     the scanners alone (a lazy reader: fast, and trusting)
 *   json    the message must also be one well-formed JSON text: for the
 *           optics reader (reader.h) checked in the same pass that finds
 *           the kind's base (jv_valid, jsonvalid.h); vf_check and `check` use
 *           js_validate, the reference, which names the error
 *   schema  it must also be what the full decoder accepts (the generated
 *           validator, rendered from the decoder's own template): then the optics'
 *           verdict equals the decoder's on every input whatsoever
 *
 * A checker owns one scratch arena, allocated at creation and reset per
 * message: nothing is allocated per message. */
#ifndef TRIAGE_VERIFY_H
#define TRIAGE_VERIFY_H

#include <stdbool.h>

#include "tr_model.h"
#include "rules.h"
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

/* The schema level in one pass, for the optics reader: true when m is what
 * the decoder accepts; then *hit tells whether the raw optic `optic` (one
 * on a member of the root, as the kind's base is) is in m, with its bytes
 * in view->bytes, handed back by the validator as it passed them. Other
 * optics (or -1) give *hit false. */
bool vf_base(vf_checker *v, tr_message m, int optic, op_value *view, bool *hit);

#endif
