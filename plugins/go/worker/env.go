// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"syscall"
)

// savedEnv holds what the execution layer's keys held before a run; nil: the key was not set.
type savedEnv map[string]*string

// applyEnv applies the env delta of an execute request (protocol §6): the context layer
// persists, the execution layer's previous values are returned to be restored after the run.
// os.Setenv changes the process environment, so child processes see it.
func applyEnv(delta *envDelta) (savedEnv, []string) {
	saved := savedEnv{}
	var errs []string
	if delta == nil {
		return saved, errs
	}
	errs = append(errs, applyLayer(delta.Context)...)
	if layer := delta.Exec; layer != nil {
		keys := make([]string, 0, len(layer.Set)+len(layer.Unset))
		for key := range layer.Set {
			keys = append(keys, key)
		}
		keys = append(keys, layer.Unset...)
		for _, key := range keys {
			if value, ok := os.LookupEnv(key); ok {
				saved[key] = &value
			} else {
				saved[key] = nil
			}
		}
		errs = append(errs, applyLayer(layer)...)
	}
	return saved, errs
}

func applyLayer(layer *envLayer) []string {
	if layer == nil {
		return nil
	}
	var errs []string
	for key, value := range layer.Set {
		var err error
		if value == nil {
			err = os.Unsetenv(key)
		} else {
			err = os.Setenv(key, *value)
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("cannot set %q in the environment: %v", key, err))
		}
	}
	for _, key := range layer.Unset {
		if err := os.Unsetenv(key); err != nil {
			errs = append(errs, fmt.Sprintf("cannot unset %q in the environment: %v", key, err))
		}
	}
	return errs
}

func restoreEnv(saved savedEnv) {
	for key, value := range saved {
		if value == nil {
			os.Unsetenv(key)
		} else {
			os.Setenv(key, *value)
		}
	}
}

// currentDir is the process's working directory as the kernel has it (os.Getwd would prefer a
// stale $PWD naming the same directory).
func currentDir() interface{} {
	if dir, err := syscall.Getwd(); err == nil {
		return dir
	}
	if dir, err := os.Getwd(); err == nil {
		return dir
	}
	return nil
}
