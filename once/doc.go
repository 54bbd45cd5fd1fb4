// Package once calls a function once per key and gives every caller of
// that key its answer: a refresh's reads of one namespace's links
// (provider.Snapshot) and a command's connection to one machine
// (remote.Machines) are each made once however many callers ask. It owns
// that rule and nothing else: what a key names and how long the answers
// live are its users'.
package once
