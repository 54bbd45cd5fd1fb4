// Package calibrate fits the model's cost parameters to observed figures,
// as code: a lab's calibrate block names the CPU profile, the parameters
// that are free and the observed blocks to fit; Fit runs the model on
// those cells and minimises the squared relative error with Nelder-Mead
// (gonum/optimize), and writes the result as a file the lab keeps beside
// its HCL. Profiles applies such files to the built-in profiles, so every
// run of the lab uses the fitted values, and the results can say which
// observed figures were fitted and which were predicted.
//
// A predicted figure never enters the fit: changing it changes nothing
// the model outputs (TestHeldOutFiguresDoNotMoveTheModel).
package calibrate
