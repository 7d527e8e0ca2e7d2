package io.nvmf4j.config;

import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.InputCoercionException;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.exc.InvalidFormatException;
import com.fasterxml.jackson.databind.exc.MismatchedInputException;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.regex.Pattern;

/**
 * Jackson's failures in plain words naming the field ({@code port: expected an integer, got a string}), never
 * Jackson's own text: for the config file ({@link ConfigStore#parse}) and for REST bodies alike.
 */
public final class JsonProblems {
    /** Jackson's STRICT_DUPLICATE_DETECTION text; the key is taken from it (the parser has not moved to it). */
    private static final Pattern DUPLICATE = Pattern.compile("Duplicate field '([^']*)'");

    private JsonProblems() {
    }

    /**
     * One failure: {@code field} is the JSON path ({@code subsystems[0].listeners[1].port}; null when the
     * failure is not about a field), {@code message} starts with it, line and column are 0 when unknown.
     */
    public record Problem(String field, String message, int line, int column) {
        /** " (line L, column C)", or "" when the place is unknown. */
        public String where() {
            return line <= 0 ? "" : " (line " + line + ", column " + column + ")";
        }
    }

    /** Describes {@code e}; {@code whole} names the top-level value when the failure is about it (e.g. "body"). */
    public static Problem of(JsonProcessingException e, String whole) {
        int line = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
        int column = e.getLocation() == null ? 0 : e.getLocation().getColumnNr();
        String path = e instanceof JsonMappingException m ? pathOf(m) : parserPath(e, false);
        String field = path.isEmpty() ? null : path;
        String subject = field == null ? whole : field;
        String raw = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        Throwable cause = e.getCause();
        if (e instanceof UnrecognizedPropertyException) {
            return new Problem(field, subject + ": unknown field", line, column);
        }
        var duplicate = DUPLICATE.matcher(raw);
        if (duplicate.lookingAt()) {
            String object = parserPath(e, true);
            String key = (object.isEmpty() ? "" : object + ".") + duplicate.group(1);
            return new Problem(key, key + ": duplicate key", line, column);
        }
        if (e instanceof InputCoercionException || cause instanceof InputCoercionException) {
            return new Problem(subject, subject + ": number out of range", line, column);
        }
        if (raw.startsWith("No content")) {
            return new Problem(null, whole + ": empty", line, column);
        }
        if (raw.contains("ALLOW_COMMENTS")) {
            return new Problem(null, "malformed JSON: comments are not allowed", line, column);
        }
        if (e instanceof JsonParseException || raw.startsWith("Trailing token")) {
            return new Problem(null, "malformed JSON", line, column);
        }
        if (e instanceof MismatchedInputException m && m.getTargetType() != null) {
            String got = e instanceof InvalidFormatException f ? describeValue(f.getValue()) : currentToken(e);
            return new Problem(subject, subject + ": expected " + describe(m.getTargetType())
                + (got == null ? "" : ", got " + got), line, column);
        }
        return new Problem(subject, subject + ": invalid value", line, column);
    }

    private static String pathOf(JsonMappingException e) {
        StringBuilder sb = new StringBuilder();
        for (JsonMappingException.Reference r : e.getPath()) {
            if (r.getFieldName() != null) {
                sb.append(sb.length() == 0 ? "" : ".").append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    /**
     * The path the parser was at (a duplicate key is found while reading, before any field is bound); with
     * {@code objectOnly} the path of the object being read, without the key it was at.
     */
    private static String parserPath(JsonProcessingException e, boolean objectOnly) {
        if (!(e.getProcessor() instanceof JsonParser p)) {
            return "";
        }
        Deque<String> parts = new ArrayDeque<>();
        JsonStreamContext innermost = p.getParsingContext();
        for (JsonStreamContext c = innermost; c != null && !c.inRoot(); c = c.getParent()) {
            if (c == innermost && objectOnly && c.inObject()) {
                continue;
            }
            if (c.inObject() && c.getCurrentName() != null) {
                parts.push("." + c.getCurrentName());
            } else if (c.inArray()) {
                parts.push("[" + Math.max(c.getCurrentIndex(), 0) + "]");
            }
        }
        String path = String.join("", parts);
        return path.startsWith(".") ? path.substring(1) : path;
    }

    private static String currentToken(JsonProcessingException e) {
        if (!(e.getProcessor() instanceof JsonParser p) || p.currentToken() == null) {
            return null;
        }
        JsonToken t = p.currentToken();
        return switch (t) {
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            case VALUE_NUMBER_FLOAT -> "a decimal number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            case START_ARRAY, END_ARRAY -> "an array";
            case START_OBJECT, END_OBJECT, FIELD_NAME -> "an object";
            default -> null;
        };
    }

    private static String describeValue(Object v) {
        if (v instanceof String) {
            return "a string";
        }
        if (v instanceof Number n) {
            return n instanceof Double || n instanceof Float || n instanceof java.math.BigDecimal
                ? "a decimal number" : "an integer";
        }
        if (v instanceof Boolean) {
            return "a boolean";
        }
        return null;
    }

    private static String describe(Class<?> type) {
        if (type == int.class || type == Integer.class || type == long.class || type == Long.class
            || type == short.class || type == Short.class) {
            return "an integer";
        }
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == String.class) {
            return "a string";
        }
        if (type.isArray() || Collection.class.isAssignableFrom(type)) {
            return "an array";
        }
        return "an object";
    }
}
