from iclr26.cli import main

main()
