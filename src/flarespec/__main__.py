from flarespec.cli import main

main()
