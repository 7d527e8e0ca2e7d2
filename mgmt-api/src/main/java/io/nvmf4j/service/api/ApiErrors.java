package io.nvmf4j.service.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.JsonProblems;
import io.nvmf4j.config.LogText;
import io.nvmf4j.service.state.ConfigService;
import io.nvmf4j.engine.PersistenceException;
import io.nvmf4j.runtime.FatalErrors;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.HttpException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns every failure into {@code {"error": reason, "field": path-or-null}} with its status. Nothing
 * internal leaves the process: an unexpected exception answers 500 with a generic reason and is logged.
 */
final class ApiErrors {
    private static final Logger LOG = LoggerFactory.getLogger(ApiErrors.class);
    /** "a.b[0].c: reason" — the field path that engine and validator messages start with. */
    private static final Pattern LEADING_FIELD = Pattern.compile("^([A-Za-z][A-Za-z0-9_]*(\\[\\d+])*"
        + "(\\.[A-Za-z][A-Za-z0-9_]*(\\[\\d+])*)*): ");

    private ApiErrors() {
    }

    /** What to answer. */
    record Problem(int status, String error, String field) {
    }

    /** Failure handler and error handler of the router. */
    static void handle(RoutingContext ctx) {
        FatalErrors.raise(unwrap(ctx.failure())); // an Error (out of memory) stops the process; this request gets its 500
        Problem p = problemOf(ctx);
        ctx.put(AuditLog.REASON, p.error());
        if (ctx.response().headWritten()) {
            ctx.request().connection().close();
            return;
        }
        ObjectNode body = JsonNodeFactory.instance.objectNode().put("error", p.error()).put("field", p.field());
        if (p.status() == 401) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"nvmf4j\"");
        }
        ctx.response().setStatusCode(p.status()).putHeader("Content-Type", "application/json")
            .end(body.toString());
    }

    static Problem problemOf(RoutingContext ctx) {
        Throwable f = unwrap(ctx.failure());
        if (f == null) {
            int status = ctx.statusCode() < 400 ? 500 : ctx.statusCode();
            return new Problem(status, reasonOf(status, ctx), null);
        }
        if (f instanceof ApiError a) {
            return new Problem(a.status(), a.getMessage(), a.field());
        }
        if (f instanceof ConfigException c) {
            return new Problem(400, c.getMessage(), c.problems().isEmpty() ? null : fieldOf(c.problems().get(0)));
        }
        if (f instanceof ControlException c) {
            return switch (c.kind()) {
                case INVALID -> new Problem(400, c.getMessage(), fieldOf(c.getMessage()));
                case NOT_FOUND -> new Problem(404, c.getMessage(), null);
                case CONFLICT -> new Problem(409, c.getMessage(), null);
            };
        }
        if (f instanceof JsonProcessingException j) {
            return jsonProblem(j);
        }
        if (f instanceof HttpException h) {
            return new Problem(h.getStatusCode(), reasonOf(h.getStatusCode(), ctx), null);
        }
        if (f instanceof ConfigService.PreconditionFailedException pf) {
            ctx.response().putHeader(ApiContract.ETAG, pf.current());
            return new Problem(412, pf.getMessage(), null);
        }
        if (f instanceof PersistenceException) {
            LOG.error("{} {}: {} ({})", ctx.request().method(), LogText.escape(ctx.request().path()),
                LogText.escape(f.getMessage()), f.getCause());
            return new Problem(500, f.getMessage(), null);
        }
        LOG.error("{} {} failed", ctx.request().method(), LogText.escape(ctx.request().path()), f);
        return new Problem(500, "internal error (see the service log)", null);
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException
            || t instanceof ApiRoutes.JsonBodyException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    private static String reasonOf(int status, RoutingContext ctx) {
        return switch (status) {
            case 404 -> "no route " + ctx.request().method() + " " + ctx.request().path();
            case 405 -> "method " + ctx.request().method() + " is not allowed on " + ctx.request().path();
            case 413 -> "request body larger than " + ApiRoutes.BODY_LIMIT + " bytes";
            case 415 -> "Content-Type must be application/json";
            case 401 -> "missing bearer token";
            default -> status >= 500 ? "internal error (see the service log)" : "bad request";
        };
    }

    /** The path before the first ": " of a problem, when it looks like a field path; otherwise null. */
    static String fieldOf(String problem) {
        Matcher m = LEADING_FIELD.matcher(problem == null ? "" : problem);
        return m.find() ? m.group(1) : null;
    }

    private static Problem jsonProblem(JsonProcessingException e) {
        JsonProblems.Problem p = JsonProblems.of(e, "body");
        if (p.field() == null && p.line() > 0) {
            return new Problem(400, p.message() + " at line " + p.line() + ", column " + p.column(), null);
        }
        return new Problem(400, p.message(), p.field());
    }
}
