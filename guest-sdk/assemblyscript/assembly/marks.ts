// Fuel marks (measurement builds only). Built with `--use TDM_FUEL_MARKS=1`, the SDK imports
// `contour_profile.mark(i32)` and calls it between the stages of an intent, so benches' `sdk_fuel`
// harness (`make sdk-fuel`, bare wasmi with Contour's fuel costs) can split one intent's fuel into
// envelope, params, handler, response and allocator. Such a module does not load in Contour (the
// import is not on the allowlist); without the constant `fuelMark` compiles to nothing. A plugin
// marks the end of its own params and handler stages (see examples/assemblyscript/hello).

/** The envelope (method and params) has been read. */
export const MARK_ENVELOPE: i32 = 1;
/** The plugin has read its params. */
export const MARK_PARAMS: i32 = 2;
/** The plugin's own work is done; what follows is writing the response. */
export const MARK_HANDLER: i32 = 3;
/** An allocation starts. */
export const MARK_ALLOC_ENTER: i32 = 100;
/** An allocation ends. */
export const MARK_ALLOC_EXIT: i32 = 101;

// @ts-ignore: decorator
@external("contour_profile", "mark")
declare function contour_profile_mark(stage: i32): void;

/** Marks the end of a stage (a no-op unless built with `--use TDM_FUEL_MARKS=1`). */
// @ts-ignore: decorator
@inline export function fuelMark(stage: i32): void {
  if (isDefined(TDM_FUEL_MARKS)) contour_profile_mark(stage);
}
