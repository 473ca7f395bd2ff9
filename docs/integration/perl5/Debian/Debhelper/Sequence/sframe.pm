#!/usr/bin/perl
# debhelper add-on "sframe" (dh $@ --with sframe): dh_sframe right before dh_strip,
# so that .debug_frame is still in the files when sframe-gen reads them.
use strict;
use warnings;
use Debian::Debhelper::Dh_Lib;

insert_before('dh_strip', 'dh_sframe');

1;
