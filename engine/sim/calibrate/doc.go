// Package calibrate fits the model's cost parameters to observed figures,
// as code: a lab's calibrate block names the CPU profile, the parameters
// that are free and the observed blocks to fit; Fit runs the model on
// those cells and minimises the sum of squared relative errors with
// Nelder-Mead (gonum/optimize) on the parameters' logarithms, from the
// best point of a coarse scan of each parameter in turn (a quarter to
// four times its built-in value, in factors of √2), restarted
// from the best point with a fresh simplex until a round gains less than
// 0.1% of the cost (one run stops early in a flat valley), and writes
// the result as a file the lab keeps beside its HCL. The file says how
// sure the fit is: per parameter, the range over which the cost stays
// within 1% of the best (or 1e-6), scanned along the parameter alone and
// seen over every point the fit tried. Profiles applies such files to the
// built-in profiles, so every run of the lab uses the fitted values, and
// the results can say which observed figures were fitted and which were
// predicted. Everything is deterministic: the model is, and so is the
// optimiser.
//
// A predicted figure never enters the fit: changing it changes nothing
// the model outputs (TestHeldOutFiguresDoNotMoveTheModel).
package calibrate
