// devices: lists the devices, picks the best one, moves a tensor there and back, prints
// it, and shows the error devtensor gives for operands on two devices.
package main

import (
	"errors"
	"fmt"
	"os"

	dt "github.com/devtensor/devtensor/bindings/go/devtensor"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devices:", err)
		os.Exit(1)
	}
}

func run() error {
	state, reason, err := dt.CUDAStatus()
	if err != nil {
		return err
	}
	fmt.Printf("CUDA: %s (%s)\n", state.String(), reason)
	gpus, err := dt.AllGPUs()
	if err != nil {
		return err
	}
	fmt.Println("all GPUs (or [cpu]):", gpus)
	best, err := dt.TryGPU(0)
	if err != nil {
		return err
	}
	fmt.Println("best device:", best)
	x, err := dt.FromSlice([]float32{1, 2, 3, 4}, []int64{2, 2}, dt.CPU(0))
	if err != nil {
		return err
	}
	defer x.Close()
	y, err := x.To(best)
	if err != nil {
		return err
	}
	defer y.Close()
	fmt.Println("on", best, y)
	if n, _ := dt.DeviceCount(dt.DeviceCPU); n > 1 {
		other, err := dt.Ones([]int64{2, 2}, dt.Float32, dt.CPU(1))
		if err != nil {
			return err
		}
		defer other.Close()
		_, err = x.Add(other)
		fmt.Println("cpu:0 + cpu:1 ->", err, "| errors.Is(err, ErrDeviceMismatch):", errors.Is(err, dt.ErrDeviceMismatch))
	}
	return nil
}
