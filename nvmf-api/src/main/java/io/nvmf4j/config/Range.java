package io.nvmf4j.config;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The values a numeric field of the configuration model may take, declared on the field: {@link ConfigValidator}
 * refuses a document outside it ({@link Ranges}) and the API's schema states it (minimum, maximum, multipleOf). A
 * rule beyond a range (a power of two, 0 for "none") stays in the validator.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.FIELD)
public @interface Range {
    /** Inclusive minimum. */
    long min();

    /** Inclusive maximum; {@link Long#MAX_VALUE}: none. */
    long max() default Long.MAX_VALUE;

    /** The value is a multiple of this; 0: any value. */
    long multipleOf() default 0;

    /** What a value means, said after the range in a refusal ("0 disables the API"); empty: nothing. */
    String note() default "";
}
