/*
 * fit.c — POST /v1/fit: models for the points a caller sends, nothing stored
 * (analysis/fit_request.h reads the input and fits).
 *
 * The body is an Extra-P input file (text, JSON, JSON Lines, TaLPas: format
 * from ?format=, else recognized from the bytes) or perfcast's own
 * {"parameters":["ranks"],"points":[{"point":[2],"values":[1.2,1.3]}],
 *  "callpath":"...","metric":"...","measure":"mean|median","options":{...},
 *  "modeler":"extrap|robust","predict":[[64],[128]]}. Answers {"models":[...]}:
 * one model per (callpath, metric) in the shape `perfcast model --json`
 * prints, with predictions and 95% intervals at the requested points for
 * perfcast JSON, each with its coded warnings (api/warnings.h). The modeler
 * is the robust one (PMNF_MODELER_DEFAULT) unless ?modeler= or "modeler"
 * says extrap; the robust modeler gets every repetition.
 */
#include "analysis/fit_request.h"
#include "api/handlers.h"

void api_fit(api_ctx *ctx, api_request *req, api_response *resp)
{
    (void)ctx;
    int is_perfcast;
    ingest_format fmt;
    an_problem p;
    if (fit_request_format(api_query(req, "format"), req->body, req->body_len, &fmt,
                           &is_perfcast, &p) < 0) {
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
        return;
    }
    pmnf_options o;
    pmnf_options_default(&o);
    o.modeler = PMNF_MODELER_DEFAULT;
    const char *measure = api_query(req, "measure");
    char err[256];
    if (measure && pmnf_options_set(&o, "measure", measure, err, sizeof err) < 0) {
        api_problem(resp, 400, "measure", "must be mean or median");
        return;
    }
    const char *modeler = api_query(req, "modeler");
    if (modeler && pmnf_options_apply(&o, "modeler", modeler, err, sizeof err) < 0) {
        api_problem(resp, 400, "modeler", "unknown modeler \"%.40s\": must be robust, extrap or segmented",
                    modeler);
        return;
    }
    json_t *doc = NULL, *answer;
    if (is_perfcast && api_parse_object(req, resp, &doc) < 0)
        return;
    answer = is_perfcast ? fit_request_perfcast(doc, &o, &p)
                         : fit_request_extrap(req->body, req->body_len, fmt, &o, &p);
    json_decref(doc);
    if (answer)
        api_send_json(resp, 200, answer);
    else
        api_problem(resp, p.status, p.field[0] ? p.field : NULL, "%s", p.msg);
}
