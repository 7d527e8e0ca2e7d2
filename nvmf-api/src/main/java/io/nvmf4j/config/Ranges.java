package io.nvmf4j.config;

import java.lang.reflect.Field;
import java.util.List;

/** Reads the {@link Range} a field of the configuration model declares, and checks a value against it. */
public final class Ranges {
    private Ranges() {
    }

    /** The range field {@code name} of {@code type} declares (a model without it is a programming error). */
    public static Range of(Class<?> type, String name) {
        try {
            Range r = type.getField(name).getAnnotation(Range.class);
            if (r == null) {
                throw new IllegalArgumentException(type.getSimpleName() + "." + name + " declares no range");
            }
            return r;
        } catch (NoSuchFieldException e) {
            throw new IllegalArgumentException(type.getSimpleName() + " has no field " + name, e);
        }
    }

    /** Whether {@code v} is inside {@code r}. */
    public static boolean holds(Range r, long v) {
        return v >= r.min() && v <= r.max() && (r.multipleOf() == 0 || v % r.multipleOf() == 0);
    }

    /** {@code min..max}, as refusals say it. */
    public static String span(Range r) {
        return r.min() + ".." + r.max();
    }

    /**
     * Adds {@code "at.name: must be min..max (note), got v"} to {@code problems} when field {@code name} of
     * {@code owner} (a number; null is left to other rules) is outside its declared range.
     */
    public static void check(List<String> problems, String at, Object owner, String name) {
        Range r = of(owner.getClass(), name);
        Number v;
        try {
            Field f = owner.getClass().getField(name);
            v = (Number) f.get(owner);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        if (v != null && !holds(r, v.longValue())) {
            problems.add(refusal(at.isEmpty() ? name : at + "." + name, r, v));
        }
    }

    /** {@code "path: must be min..max (note), got v"}. */
    public static String refusal(String path, Range r, Object v) {
        String step = r.multipleOf() == 0 ? "" : "a multiple of " + r.multipleOf() + " in ";
        return path + ": must be " + step + span(r) + (r.note().isEmpty() ? "" : " (" + r.note() + ")") + ", got " + v;
    }

    /** Every field of {@code type} with a range, for the schema. */
    public static List<Field> fields(Class<?> type) {
        return java.util.Arrays.stream(type.getFields()).filter(f -> f.isAnnotationPresent(Range.class)).toList();
    }
}
