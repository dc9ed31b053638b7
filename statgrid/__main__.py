from statgrid.cli import main

main()
