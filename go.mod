module github.com/gdnn/gdnn

go 1.26.0

require (
	github.com/x448/float16 v0.8.4
	golang.org/x/sys v0.49.0
)

require github.com/twitchyliquid64/golang-asm v0.15.1
