#!/usr/bin/perl
# debhelper add-on "sframe" (dh $@ --with sframe, or Build-Depends:
# dh-sequence-sframe): dh_sframe right before dh_strip, so that .debug_frame
# is still in the files when sframe-gen reads them.
#
# Like dh_strip, whose add-on (elf-tools) dh loads for the arch-dependent
# packages only, the add-on is conditional on "*-arch" targets whichever
# field or option asked for it: dh runs "dh_sframe -a" in binary and
# binary-arch, and leaves it out of binary-indep. dh keeps the add-on's
# constraint (what Build-Depends-Arch: dh-sequence-sframe gives) in
# $DH_INTERNAL_ADDON_TYPE, local to this file's loading; dh_sframe itself
# also skips Architecture: all packages, so an older or newer dh without
# that variable only costs a no-op run.
use strict;
use warnings;
use Debian::Debhelper::Dh_Lib;

{
	no warnings 'once';
	if (($Debian::Debhelper::DH::AddonAPI::DH_INTERNAL_ADDON_TYPE // '') eq 'both') {
		$Debian::Debhelper::DH::AddonAPI::DH_INTERNAL_ADDON_TYPE = 'arch';
	}
}

insert_before('dh_strip', 'dh_sframe');

1;
